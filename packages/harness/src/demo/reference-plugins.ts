import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import fs from 'fs-extra';
import { AuthoringError } from '../authoring/errors.js';

/** The reference plugins' packages, and where each keeps its built file. */
export const REFERENCE_PLUGINS = {
  'dhv-mkdir': { packageName: '@dhv/plugin-mkdir', file: 'dist/dhv-mkdir' },
  'dhv-loopback': { packageName: '@dhv/plugin-loopback', file: 'dist/dhv-loopback' },
} as const;

export type ReferencePluginId = keyof typeof REFERENCE_PLUGINS;

/**
 * The built plugin's path, found through its package: the workspace folder in a checkout
 * (after `npm run build`) or the installed package beside @dhv/harness. Otherwise, what
 * is missing and what to do about it.
 */
export async function findReferencePlugin(
  id: ReferencePluginId,
  resolve: (specifier: string) => string = createRequire(import.meta.url).resolve,
): Promise<{ file: string } | { missing: string; fix: string }> {
  const { packageName, file } = REFERENCE_PLUGINS[id];
  let packageDir: string;
  try {
    packageDir = dirname(resolve(`${packageName}/package.json`));
  } catch {
    // The reference plugins are not published: they travel inside the one-file install.
    return {
      missing: packageName,
      fix: 'install dhv from the tarball that brings the reference plugins (README, Install: npm run pack in a checkout of dhv, then npm install -g ./dhv-harness-<version>.tgz), or run dhv demo in a checkout after npm ci && npm run build',
    };
  }
  const path = join(packageDir, file);
  const runnable = await fs.access(path, fs.constants.X_OK).then(
    () => true,
    () => false,
  );
  return runnable
    ? { file: path }
    : { missing: path, fix: `build it: npm run build -w ${packageName} (in a checkout of dhv)` };
}

export interface ReferencePluginListing {
  id: ReferencePluginId;
  packageName: string;
  version: string;
  /** The executable, ready to copy into a plugin dir; absent when `missing` says why. */
  path?: string;
  missing?: string;
  fix?: string;
}

/** Every reference plugin this dhv brings, with its version and where its executable is. */
export async function listReferencePlugins(
  resolve: (specifier: string) => string = createRequire(import.meta.url).resolve,
): Promise<ReferencePluginListing[]> {
  return Promise.all(
    (Object.keys(REFERENCE_PLUGINS) as ReferencePluginId[]).map(async (id) => {
      const { packageName } = REFERENCE_PLUGINS[id];
      const found = await findReferencePlugin(id, resolve);
      const version = await fs.readJson(resolve(`${packageName}/package.json`)).then(
        (p: { version?: string }) => p.version ?? '',
        () => '',
      );
      return 'file' in found
        ? { id, packageName, version, path: found.file }
        : { id, packageName, version, missing: found.missing, fix: found.fix };
    }),
  );
}

export function isReferencePluginId(id: string): id is ReferencePluginId {
  return Object.hasOwn(REFERENCE_PLUGINS, id);
}

/**
 * Copies a reference plugin into a plugin dir as `<dir>/<id>`, mode 0755, through a
 * temporary file renamed into place (an agent fingerprinting meanwhile sees the old file
 * or the new, never half of one). A file already there with the same bytes is left as it
 * is; a different one is never replaced.
 */
export async function installReferencePlugin(
  id: ReferencePluginId,
  pluginDir: string,
  resolve?: (specifier: string) => string,
): Promise<{ path: string; source: string; installed: boolean }> {
  const found = await findReferencePlugin(id, resolve);
  if (!('file' in found))
    throw new AuthoringError('PLUGIN_UNAVAILABLE', `${id} is not in this install (${found.missing}): ${found.fix}`, {
      plugin: id,
    });
  const target = join(pluginDir, id);
  const wanted = await fs.readFile(found.file);
  const present = await fs.readFile(target).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  if (present !== undefined) {
    if (present.equals(wanted)) return { path: target, source: found.file, installed: false };
    throw new AuthoringError(
      'PLUGIN_FILE_DIFFERS',
      `${target} is there and is not the ${id} of this dhv (${found.file}); dhv replaces no file it did not write: move it aside (or remove it) and run this again`,
      { plugin: id, path: target, source: found.file },
    );
  }
  await fs.mkdir(pluginDir, { recursive: true });
  const temporary = join(pluginDir, `.${id}.dhv-install-${process.pid}`);
  try {
    await fs.writeFile(temporary, wanted, { mode: 0o755, flag: 'wx' });
    await fs.chmod(temporary, 0o755);
    // link() refuses an existing name: a file put there since the check above is never replaced.
    await fs.link(temporary, target).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err;
      throw new AuthoringError('PLUGIN_FILE_DIFFERS', `${target} appeared while dhv installed ${id}; run this again`, {
        plugin: id,
        path: target,
      });
    });
  } finally {
    await fs.rm(temporary, { force: true });
  }
  return { path: target, source: found.file, installed: true };
}
