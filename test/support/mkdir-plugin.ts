import { randomUUID } from 'node:crypto';
import { chmod, lstat, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { bundlePlugin } from '@dhv/sdk/build';
import { type ExecOptions, type RequestInput } from '@dhv/sdk/client';
import { runAsDhv } from './run-as-dhv.js';
import { afterAll, beforeAll } from 'vitest';
import { REPO_ROOT } from './checkout-paths.js';
import { tempDir } from './temp-dir.js';

/**
 * Test support for dhv-mkdir: the plugin built from source into a temporary directory
 * (so tests need no `npm run build` of this package), run as a separate process through
 * the runner dhv itself uses (runAsDhv), exactly as an agent runs it.
 */
export const MKDIR_PACKAGE_DIR = join(REPO_ROOT, 'packages/plugin-mkdir');
const PLUGIN_ENTRY = join(MKDIR_PACKAGE_DIR, 'src/plugin.ts');

export interface BuiltPlugin {
  /** The bundled dhv-mkdir, inside a plugin directory of its own. */
  executable: string;
  dir: string;
  remove(): Promise<void>;
}

export async function buildPlugin(): Promise<BuiltPlugin> {
  const dir = await tempDir('mkdir-plugin');
  const { outfile } = await bundlePlugin({ entry: PLUGIN_ENTRY, outfile: join(dir, 'dhv-mkdir') });
  return { executable: outfile, dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/**
 * Builds dhv-mkdir once for the enclosing suite (beforeAll) and removes it afterwards
 * (afterAll). The returned object reads the build lazily, so tests use it as the plugin.
 */
export function useBuiltPlugin(): BuiltPlugin {
  let built: BuiltPlugin | undefined;
  beforeAll(async () => {
    built = await buildPlugin();
  });
  afterAll(async () => {
    await built?.remove();
  });
  const current = (): BuiltPlugin => {
    if (!built) throw new Error('dhv-mkdir is not built yet: use the plugin inside a test');
    return built;
  };
  return {
    get executable() {
      return current().executable;
    },
    get dir() {
      return current().dir;
    },
    remove: () => current().remove(),
  };
}

/**
 * A plugin executable that runs dhv-mkdir after some shell set-up (a umask, a working
 * directory): the plugin inherits both from its parent, as it does from the agent.
 */
export async function wrapPlugin(dir: string, executable: string, name: string, setup: string): Promise<string> {
  const wrapper = join(dir, name);
  await writeFile(wrapper, `#!/bin/sh\n${setup}\nexec '${executable}' "$@"\n`);
  await chmod(wrapper, 0o755);
  return wrapper;
}

export const newVolumeId = (): string => randomUUID();

export function createRequest(
  volumesDir: string,
  volumeId: string,
  extra: Partial<RequestInput<'create'>> = {},
): RequestInput<'create'> {
  return { volumesDir, volumeId, volumeName: `vol-${volumeId.slice(0, 8)}`, nodeId: NODE_ID, ...extra };
}

export function deleteRequest(
  volumesDir: string,
  volumeId: string,
  extra: Partial<RequestInput<'delete'>> = {},
): RequestInput<'delete'> {
  return { volumesDir, volumeId, volumeName: `vol-${volumeId.slice(0, 8)}`, nodeId: NODE_ID, ...extra };
}

const NODE_ID = '9d1f3c6e-0000-4000-8000-00000000a001';

export function create(executable: string, request: RequestInput<'create'>, options: ExecOptions = {}) {
  return runAsDhv(executable, 'create', request, { pluginId: 'dhv-mkdir', ...options });
}

export function remove(executable: string, request: RequestInput<'delete'>, options: ExecOptions = {}) {
  return runAsDhv(executable, 'delete', request, { pluginId: 'dhv-mkdir', ...options });
}

/** mode, owner and group of a path (not followed), and its entries when it is a directory. */
export async function snapshot(
  path: string,
): Promise<{ mode: number; uid: number; gid: number; entries: Record<string, string> }> {
  const stats = await lstat(path);
  const entries: Record<string, string> = {};
  if (stats.isDirectory()) {
    for (const name of (await readdir(path)).sort()) {
      const child = join(path, name);
      const s = await lstat(child);
      entries[name] = s.isFile()
        ? `file ${(s.mode & 0o7777).toString(8)} ${s.uid}:${s.gid} ${await readFile(child, 'utf8')}`
        : `${s.isDirectory() ? 'dir' : 'other'} ${(s.mode & 0o7777).toString(8)} ${s.uid}:${s.gid}`;
    }
  }
  return { mode: stats.mode & 0o7777, uid: stats.uid, gid: stats.gid, entries };
}

/** Every path under `dir`, relative, sorted; for "nothing else changed" assertions. */
export async function listTree(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true });
  return entries.map(String).sort();
}

export async function modeOf(path: string): Promise<number> {
  return (await lstat(path)).mode & 0o7777;
}
