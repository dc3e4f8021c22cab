import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import fs from 'fs-extra';

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
      fix: 'install dhv from the tarball that brings the reference plugins (README, Install: npm run pack in a checkout of dhv, then npm install -g ./dhv-<version>.tgz), or run dhv demo in a checkout after npm ci && npm run build',
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
