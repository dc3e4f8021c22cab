import { access, constants } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

/** Where the reference plugins land after `npm run build`, relative to this package in the workspace. */
export const REFERENCE_PLUGINS = {
  'dhv-mkdir': { file: fileURLToPath(new URL('../../../plugin-mkdir/dist/dhv-mkdir', import.meta.url)), workspace: '@dhv/plugin-mkdir' },
  'dhv-loopback': { file: fileURLToPath(new URL('../../../plugin-loopback/dist/dhv-loopback', import.meta.url)), workspace: '@dhv/plugin-loopback' },
} as const;

export type ReferencePluginId = keyof typeof REFERENCE_PLUGINS;

/** The built plugin's path, or undefined with the command that builds it. */
export async function findReferencePlugin(id: ReferencePluginId): Promise<{ file: string } | { missing: string; build: string }> {
  const { file, workspace } = REFERENCE_PLUGINS[id];
  try {
    await access(file, constants.X_OK);
    return { file };
  } catch {
    return { missing: file, build: `npm run build -w ${workspace}` };
  }
}

/** The `dhv` executable of this package, for running the CLI as a separate process. */
export const DHV_BIN = fileURLToPath(new URL('../../bin/run.js', import.meta.url));
