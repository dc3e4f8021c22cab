import { existsSync } from 'node:fs';
import {
  attachedLoopDevicesSync,
  entriesAtOrBelow,
  readMountTableSync,
  releaseEverythingBelow,
  type LoopDevice,
  type MountEntry,
  volumesDiskFoldersBelow,
} from '@dhv/sdk/host';
import { mkdtemp, readdir, realpath, rm } from 'node:fs/promises';
import { PLUGIN_NAME } from '../version.js';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * What the loopback tests share: a temp volumes dir per test, an inventory of what the
 * plugin left on the host (mounts, loop devices, files), and a cleanup that removes all
 * of it even after a failed test. For tests only; not part of the plugin.
 */

export const PACKAGE_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const BUILT_PLUGIN = join(PACKAGE_DIR, 'dist/dhv-loopback');

export function builtPlugin(): string {
  if (!existsSync(BUILT_PLUGIN)) {
    throw new Error(
      `${BUILT_PLUGIN} is missing; run \`npm run build\` (or \`npm run build -w @dhv/plugin-loopback\`) first`,
    );
  }
  return BUILT_PLUGIN;
}

export const GIB = 1024n ** 3n;
export const MIB = 1024n ** 2n;

/** A fresh volumes dir for one test, under /var/tmp; remove it with `destroyTempVolumesDir`. */
export function makeTempVolumesDir(prefix = 'dhv-loopback-test-'): Promise<string> {
  return mkdtemp(join('/var/tmp', prefix));
}

/** Mounts at `dir` or below it: a mount at `dir` itself counts. */
export function mountsAtOrBelowSync(dir: string): MountEntry[] {
  return entriesAtOrBelow(readMountTableSync(), dir);
}

/** Loop devices backed by a file below `dir`. */
export function loopDevicesBackedBelowSync(dir: string): LoopDevice[] {
  return attachedLoopDevicesSync().filter((l) => l.backingFile.startsWith(`${dir}/`));
}

/** Everything under a volumes dir, relative paths, the plugin's hidden folder included: it goes once it is empty. */
async function filesUnder(dir: string, prefix = ''): Promise<string[]> {
  const entries = await readdir(join(dir, prefix), { withFileTypes: true }).catch(() => []);
  const found: string[] = [];
  for (const entry of entries) {
    const path = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
    // Links are listed, never followed.
    if (entry.isDirectory()) found.push(...(await filesUnder(dir, path)));
    found.push(path);
  }
  return found.sort();
}

/** What a volumes dir holds on the host: all empty after a failed create or a delete. */
export async function inventory(dir: string): Promise<{ mounts: string[]; loopDevices: string[]; files: string[] }> {
  return {
    mounts: mountsAtOrBelowSync(dir).map((m) => m.mountPoint),
    loopDevices: loopDevicesBackedBelowSync(dir).map((l) => `${l.device} (${l.backingFile})`),
    files: await filesUnder(dir),
  };
}

export const NOTHING = { mounts: [], loopDevices: [], files: [] };

/** Unmounts, detaches and removes everything under `dir`, whatever state a test left it in. */
export async function destroyTempVolumesDir(dir: string): Promise<void> {
  await releaseEverythingBelow(dir);
  for (const { folder } of await volumesDiskFoldersBelow(PLUGIN_NAME, await realpath(dir).catch(() => dir)))
    await rm(folder, { recursive: true, force: true });
  if (mountsAtOrBelowSync(dir).length === 0) await rm(dir, { recursive: true, force: true });
}
