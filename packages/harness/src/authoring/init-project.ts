import { basename, dirname, join, relative, resolve } from 'node:path';
import fs from 'fs-extra';
import { AuthoringError } from './errors.js';
import { DHV_PACKAGES, installedPackageDir, type DhvPackage } from './installed-package.js';
import { localPackageSource, packInstalledPackages, VENDOR_DIR } from './package-source.js';
import { packageNameFor, validatePluginId } from './plugin-id.js';
import {
  isTemplateName,
  STORED_NAMES,
  TEMPLATE_NAMES,
  TEMPLATES,
  TEMPLATES_DIR,
  type TemplateName,
} from './templates.js';

export interface InitOptions {
  /** The project folder; created when missing. */
  dir: string;
  /** The plugin ID; defaults to the folder's name. */
  name?: string;
  template?: string;
  /** Write into a folder that already holds files (files of the same name are replaced). */
  force?: boolean;
  /** A folder or `npm pack` tarball of @dhv/sdk to depend on instead of a packed copy of the running one. */
  sdkFrom?: string;
  /** Likewise for @dhv/harness. */
  harnessFrom?: string;
  /** Depend on `^<version>` of the published packages instead of packed copies. */
  fromRegistry?: boolean;
}

export interface InitResult {
  dir: string;
  pluginId: string;
  template: TemplateName;
  /** Paths written, relative to `dir`. */
  files: string[];
  dependencies: Record<string, string>;
  /** Commands to run next, from inside `dir`. */
  nextSteps: string[];
}

/** The tool versions a generated project builds and tests with (those this repo uses). */
const DEV_TOOLS = { '@types/node': '^20.19.43', typescript: '^5.9.3', vitest: '^3.2.7' };

/** Scaffolds a standalone plugin project; on failure, leaves nothing it wrote behind. */
export async function initProject(options: InitOptions): Promise<InitResult> {
  const dir = resolve(options.dir);
  const pluginId = choosePluginId(options.name, dir);
  const template = options.template ?? 'minimal';
  if (!isTemplateName(template)) {
    throw new AuthoringError(
      'UNKNOWN_TEMPLATE',
      `no template named ${JSON.stringify(template)}; choose one of: ${TEMPLATE_NAMES.join(', ')}`,
      {
        template,
      },
    );
  }
  const dirExisted = await checkTarget(dir, options.force ?? false);

  const version = await ownVersion();
  const given = {
    sdk: options.sdkFrom === undefined ? undefined : await localPackageSource('@dhv/sdk', options.sdkFrom),
    harness:
      options.harnessFrom === undefined ? undefined : await localPackageSource('@dhv/harness', options.harnessFrom),
  };
  const needsRoot = TEMPLATES[template].needsRoot;
  const values: Record<string, string> = {
    pluginId,
    summary: TEMPLATES[template].summary,
    needsRoot: String(needsRoot),
    checkCommand: needsRoot ? 'sudo npm run check' : 'npm run check',
    testCommand: needsRoot ? 'sudo npm test' : 'npm test',
    requirements: needsRoot
      ? ' This plugin formats and mounts filesystems, so it needs root, as the Nomad agent runs it; without root, the test skips.'
      : '',
  };

  const files = new Map<string, string>();
  for (const folder of ['common', template]) {
    for (const [path, text] of await readTree(join(TEMPLATES_DIR, folder))) files.set(path, fill(text, values));
  }
  const written: string[] = [];
  let dependencies: { sdk: string; harness: string };
  try {
    // The exact SDK and harness running now, packed into the project (one npm for both): it
    // installs with a plain `npm install` anywhere, before and without any registry.
    const chosen: Record<DhvPackage, string | undefined> = { '@dhv/sdk': given.sdk, '@dhv/harness': given.harness };
    const toPack = options.fromRegistry ? [] : DHV_PACKAGES.filter((name) => chosen[name] === undefined);
    const packed = new Map<DhvPackage, string>();
    if (toPack.length > 0) {
      await fs.ensureDir(join(dir, VENDOR_DIR));
      for (const [name, tarball] of await packInstalledPackages(toPack, join(dir, VENDOR_DIR))) {
        packed.set(name, tarball);
        written.push(`${VENDOR_DIR}/${tarball}`);
      }
    }
    const source = (packageName: DhvPackage): string => {
      const tarball = packed.get(packageName);
      return chosen[packageName] ?? (tarball === undefined ? `^${version}` : `file:${VENDOR_DIR}/${tarball}`);
    };
    dependencies = { sdk: source('@dhv/sdk'), harness: source('@dhv/harness') };
    files.set('package.json', `${JSON.stringify(manifest(pluginId, dependencies), null, 2)}\n`);
    for (const [path, text] of [...files].sort(([a], [b]) => a.localeCompare(b))) {
      await fs.outputFile(join(dir, path), text);
      written.push(path);
    }
  } catch (err) {
    if (!dirExisted) await fs.remove(dir);
    else {
      await Promise.all(written.map((path) => fs.remove(join(dir, path))));
      await fs.rmdir(join(dir, VENDOR_DIR)).catch(() => {});
    }
    throw err;
  }
  written.sort((a, b) => a.localeCompare(b));

  const run = needsRoot ? 'sudo npm' : 'npm';
  const fromHere = relative(process.cwd(), dir);
  const cd = fromHere === '' ? '.' : fromHere.startsWith('..') ? dir : fromHere;
  return {
    dir,
    pluginId,
    template,
    files: written,
    dependencies: { '@dhv/sdk': dependencies.sdk, '@dhv/harness': dependencies.harness },
    nextSteps: [`cd ${cd}`, 'npm install', 'npm run build', `${run} run check`],
  };
}

function choosePluginId(name: string | undefined, dir: string): string {
  if (name !== undefined) return validatePluginId(name);
  try {
    return validatePluginId(basename(dir));
  } catch (err) {
    if (err instanceof AuthoringError) {
      throw new AuthoringError(
        err.code,
        `${err.message}; it comes from the folder name, so pass --name to choose the plugin ID`,
        err.details,
      );
    }
    throw err;
  }
}

/** Whether the folder already existed; refuses one that holds files unless forced. */
async function checkTarget(dir: string, force: boolean): Promise<boolean> {
  const info = await fs.stat(dir).catch(() => undefined);
  if (!info) return false;
  if (!info.isDirectory()) {
    throw new AuthoringError('NOT_A_DIRECTORY', `${dir} exists and is not a folder; choose another path`, { dir });
  }
  const entries = await fs.readdir(dir);
  if (entries.length > 0 && !force) {
    throw new AuthoringError(
      'DIRECTORY_NOT_EMPTY',
      `${dir} is not empty (${entries.length} entr${entries.length === 1 ? 'y' : 'ies'}); use an empty folder, or --force to write into it and replace files of the same names`,
      { dir, entries: entries.slice(0, 20) },
    );
  }
  return true;
}

async function ownVersion(): Promise<string> {
  const manifest = (await fs.readJson(join(installedPackageDir('@dhv/harness'), 'package.json'))) as {
    version: string;
  };
  return manifest.version;
}

function manifest(pluginId: string, dependencies: { sdk: string; harness: string }) {
  const local = dependencies.sdk.startsWith('file:');
  return {
    name: packageNameFor(pluginId),
    version: '0.1.0',
    private: true,
    description: `Nomad dynamic host volume plugin ${pluginId}`,
    type: 'module',
    engines: { node: '>=20.5' },
    scripts: {
      build: `dhv build src/plugin.ts -o dist/${pluginId}`,
      check: `npm run build && dhv check dist/${pluginId}`,
      test: 'npm run build && vitest run',
      typecheck: 'tsc',
    },
    dependencies: { '@dhv/sdk': dependencies.sdk },
    devDependencies: { '@dhv/harness': dependencies.harness, ...DEV_TOOLS },
    // The harness depends on @dhv/sdk too: make it use the same local copy rather than
    // look for that version on the registry.
    ...(local ? { overrides: { '@dhv/sdk': '$@dhv/sdk' } } : {}),
    // vitest's esbuild checks its binary after install; saying so keeps npm from warning on every install.
    allowScripts: { esbuild: true },
  };
}

function fill(text: string, values: Record<string, string>): string {
  return text.replace(/\{\{(\w+)\}\}/g, (whole, key: string) => values[key] ?? whole);
}

/** Every file under `root`, keyed by its path in the generated project. */
async function readTree(root: string): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for (const entry of await fs.readdir(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const from = join(entry.parentPath ?? entry.path, entry.name);
    const path = relative(root, from);
    const stored = basename(path);
    const name = STORED_NAMES[stored] ? join(dirname(path), STORED_NAMES[stored]) : path;
    files.set(name, await fs.readFile(from, 'utf8'));
  }
  return files;
}
