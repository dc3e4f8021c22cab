import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { loopDevicesBackedBelowSync, mountsAtOrBelowSync, tempDir } from './temp-dir.js';

/**
 * What the dhv-loopback tests share: a temp volumes dir per test (under /var/tmp, a real
 * disk) and an inventory of what the plugin left on the host (mounts, loop devices, files).
 * `removeTempDir` removes all of it even after a failed test.
 */

export const GIB = 1024n ** 3n;
export const MIB = 1024n ** 2n;

/** A fresh volumes dir `dhv-<prefix>-*` under /var/tmp for one test; remove it with `removeTempDir`. */
export function tempVolumesDir(prefix = 'loopback-test'): Promise<string> {
  return tempDir(prefix, '/var/tmp');
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
