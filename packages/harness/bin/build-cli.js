// The dhv CLI as it runs: the compiled commands bundled by esbuild into dist/cli/<id>/, and
// the oclif manifest (oclif.manifest.json beside package.json) that points oclif at them.
//
// The bundle mirrors dist/: dist/cli/<id>/cli.js (oclif's entry), commands/<topic>/<name>.js
// (one entry per command) and hooks/, split into shared chunks, so a run reads a handful of
// files instead of ~400 modules, and oclif and each module are loaded once. The manifest
// carries every command's flags, args and help, so `dhv <command>` imports only that
// command's entry and `dhv help` none.
//
// Written by the build (`npm run build`, after tsc). bin/run.js writes both again when the
// compiled packages are newer than the manifest (a `tsc -b` without the rest of the build),
// so what runs is never stale.
import { readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const MANIFEST = join(ROOT, 'oclif.manifest.json');
/**
 * tsc -b rewrites a package's build info whenever it compiles it: the manifest remembers
 * which compiles of the harness and of the SDK it bundles (in the workspace, beside it).
 */
const BUILD_INFO = [join(ROOT, 'tsconfig.tsbuildinfo'), join(ROOT, '..', 'sdk', 'tsconfig.tsbuildinfo')];
const DIST = join(ROOT, 'dist');
const COMMANDS_DIR = ['dist', 'commands'];
const BUNDLES = ['dist', 'cli'];
/**
 * Loaded as they are, not bundled: esbuild (a native binary beside its JS) and postject
 * (wasm) for `dhv build`, fast-check (large) for `dhv check --explore`, and typescript,
 * which oclif only looks for in a project that runs commands from .ts sources.
 */
const EXTERNAL = ['esbuild', 'postject', 'fast-check', 'typescript'];
/**
 * The bundle is ES modules; the CommonJS inside it (oclif and its dependencies) still calls
 * require() for node built-ins and for files it finds at run time.
 */
const BANNER =
  "import { createRequire as __dhvCreateRequire } from 'node:module';\nconst require = __dhvCreateRequire(import.meta.url);";

/**
 * oclif requires semver only to warn when Node is older than its engines, reading its own
 * package.json beside `__dirname`, which a bundle (ES modules) does not have: the check
 * cannot run here, so semver (70 KB that every dhv would parse and run) is left out.
 * npm checks dhv's own engines at install.
 */
const withoutSemver = {
  name: 'dhv-without-semver',
  setup(b) {
    b.onResolve({ filter: /^semver$/ }, () => ({ path: 'semver', namespace: 'dhv-left-out' }));
    b.onLoad({ filter: /.*/, namespace: 'dhv-left-out' }, () => ({ contents: 'module.exports = {};' }));
  },
};

/** What identifies one compile of the packages, or undefined outside a source tree (an installed package). */
export async function buildStamp() {
  const [harness, sdk] = await Promise.all(BUILD_INFO.map((path) => stat(path).catch(() => undefined)));
  if (!harness) return undefined;
  return [harness, sdk].map((info) => (info ? `${info.mtimeMs}:${info.size}` : '-')).join(' ');
}

/** The package's own file for an oclif path in package.json (`./dist/hooks/x.js`), relative to dist/, without `.js`. */
function distEntry(path) {
  const relative = path.replace(/^\.\//, '');
  if (!relative.startsWith('dist/') || !relative.endsWith('.js'))
    throw new Error(`${path}: an oclif module of dhv must be a compiled file under dist/`);
  return relative.slice('dist/'.length, -'.js'.length);
}

/**
 * The manifest oclif makes in memory from the explicit list (dist/commands/index.js), each
 * command then pointed at its own entry in the bundle, `<bundle>/commands/<topic>/<name>.js`,
 * bundled from `dist/commands/<topic>/<name>.js`: that module's default export must be the
 * very class the list holds, or the build fails.
 */
async function makeManifest(pjson) {
  const { Plugin } = await import('@oclif/core');
  const plugin = new Plugin({ root: ROOT, isRoot: true, pjson, ignoreManifest: true, errorOnManifestCreate: true });
  await plugin.load();
  const { COMMANDS } = await import(pathToFileURL(join(ROOT, ...COMMANDS_DIR, 'index.js')).href);
  const commands = {};
  for (const [id, cached] of Object.entries(plugin.manifest.commands)) {
    const relativePath = [...COMMANDS_DIR, ...id.split(':')];
    relativePath[relativePath.length - 1] += '.js';
    const module = await import(pathToFileURL(join(ROOT, ...relativePath)).href).catch(() => ({}));
    if (module.default !== COMMANDS[id])
      throw new Error(`command ${id}: ${relativePath.join('/')} must export as default the class COMMANDS lists`);
    commands[id] = { ...cached, isESM: true, relativePath };
  }
  return { commands, version: plugin.version };
}

/** Bundles `entries` (name → file under dist/) into a new directory under dist/cli/ and returns its path from ROOT. */
async function bundle(entries) {
  const { build } = await import('esbuild');
  const id = `${Date.now().toString(36)}-${process.pid}`;
  const relative = [...BUNDLES, id];
  const temp = join(ROOT, ...BUNDLES, `.${id}.tmp`);
  try {
    await build({
      entryPoints: Object.fromEntries(Object.entries(entries).map(([name, file]) => [name, join(DIST, `${file}.js`)])),
      outdir: temp,
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      // tsc's maps are read in, so the bundle's map to src/ (for --enable-source-maps).
      sourcemap: 'linked',
      sourcesContent: false,
      external: EXTERNAL,
      banner: { js: BANNER },
      plugins: [withoutSemver],
      logLevel: 'error',
    });
    // Renamed whole, so a dhv starting meanwhile never sees half a bundle.
    await rename(temp, join(ROOT, ...relative));
  } finally {
    await rm(temp, { recursive: true, force: true });
  }
  return relative.join('/');
}

/**
 * Bundles the compiled CLI and writes the manifest that points at it, by rename, so a dhv
 * starting meanwhile reads the old one or the new one whole. The bundles it replaced stay
 * (a dhv still running may yet load a chunk of its own) until `removeOtherBundles`.
 */
export async function buildCli() {
  const pjson = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8'));
  const dhvBuild = await buildStamp();
  const { commands, version } = await makeManifest(pjson);
  const entries = { cli: 'cli' };
  for (const command of Object.values(commands))
    entries[distEntry(command.relativePath.join('/'))] = distEntry(command.relativePath.join('/'));
  for (const hooks of Object.values(pjson.oclif.hooks ?? {}))
    for (const hook of [hooks].flat()) entries[distEntry(hook)] = distEntry(hook);
  const cli = await bundle(entries);
  for (const command of Object.values(commands))
    command.relativePath = [...cli.split('/'), ...command.relativePath.slice(1)];
  const manifest = { commands, version, dhvBuild, dhvCli: cli };
  const temp = `${MANIFEST}.${process.pid}.tmp`;
  await writeFile(temp, `${JSON.stringify(manifest, null, 2)}\n`);
  await rename(temp, MANIFEST);
  return manifest;
}

/** The manifest as it is, or null without one. */
export async function readManifest() {
  return readFile(MANIFEST, 'utf8').then(JSON.parse, () => null);
}

/**
 * Removes every bundle under dist/cli/ but those the manifest pointed at before and after
 * this build: a dhv started from the one before may still be loading its lazy chunks.
 */
async function removeOldBundles(...manifests) {
  const keep = new Set(manifests.map((manifest) => manifest?.dhvCli?.split('/').at(-1)));
  const dir = join(ROOT, ...BUNDLES);
  for (const name of await readdir(dir))
    if (!keep.has(name)) await rm(join(dir, name), { recursive: true, force: true });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const before = await readManifest();
  const manifest = await buildCli();
  await removeOldBundles(before, manifest);
  process.stdout.write(
    `bundled dhv into ${manifest.dhvCli}, wrote ${MANIFEST} (${Object.keys(manifest.commands).length} commands)\n`,
  );
}
