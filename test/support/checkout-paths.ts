import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where things live in this checkout: the `dhv` executable, the reference plugins, the hostile fixtures. */

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const HOSTILE_FIXTURES = join(REPO_ROOT, 'test/fixtures/hostile');
/** The fixture plugins `dhv check` is tested against. */
export const HARNESS_FIXTURES = join(REPO_ROOT, 'packages/harness/fixtures');
/** The real `dhv` executable; tests run it as a separate process, as a user would. */
export const DHV_BIN = join(REPO_ROOT, 'packages/harness/bin/run.js');

export const LOOPBACK_PACKAGE_DIR = join(REPO_ROOT, 'packages/plugin-loopback');

export const REFERENCE_MKDIR = join(REPO_ROOT, 'packages/plugin-mkdir/dist/dhv-mkdir');
export const REFERENCE_LOOPBACK = join(REPO_ROOT, 'packages/plugin-loopback/dist/dhv-loopback');

const PLUGIN_EXECUTABLES = {
  'dhv-mkdir': REFERENCE_MKDIR,
  'dhv-loopback': REFERENCE_LOOPBACK,
} as const;

export type ReferencePlugin = keyof typeof PLUGIN_EXECUTABLES;

const PLUGIN_WORKSPACES: Record<ReferencePlugin, string> = {
  'dhv-mkdir': '@dhv/plugin-mkdir',
  'dhv-loopback': '@dhv/plugin-loopback',
};

/** The reference plugin's executable, built first when `dist/` does not have it yet. */
export function builtPlugin(id: ReferencePlugin): string {
  const file = PLUGIN_EXECUTABLES[id];
  if (!existsSync(file)) {
    execFileSync('npm', ['run', 'build', '-w', PLUGIN_WORKSPACES[id]], { cwd: REPO_ROOT, stdio: 'ignore' });
  }
  return file;
}
