import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { attachedLoopDevicesSync, deepestFirst, entriesAtOrBelow, readMountTableSync } from '@dhv/sdk/host';
import { forgetDiskRecordsBelow } from './plugin-disk-records.js';

/**
 * A test's own temporary directory and what a test can leave in it on the host: mounts at
 * or below it and loop devices backed by files in it, released before the directory goes.
 */

/** A fresh directory under the system temp dir; remove it with `removeTempDir`. */
export function makeTempDir(prefix = 'test'): Promise<string> {
  return mkdtemp(join(tmpdir(), `dhv-${prefix}-`));
}

/** Removes the directory, and the reference plugins' records of the volumes dirs in it. */
export async function removeTempDir(dir: string | undefined): Promise<void> {
  if (!dir) return;
  await forgetDiskRecordsBelow(dir);
  await rm(dir, { recursive: true, force: true });
}

/** Loop devices whose backing file lies under `dir`, found by backing file through sysfs. */
export function loopDeviceNamesBackedBelow(dir: string): string[] {
  return attachedLoopDevicesSync()
    .filter((l) => l.backingFile === dir || l.backingFile.startsWith(`${dir}/`))
    .map((l) => l.device);
}

/** Mount points at or below `dir` (the folder itself counts), deepest first, so they can be unmounted in that order. */
export function mountPointsAtOrBelow(dir: string): string[] {
  return deepestFirst(entriesAtOrBelow(readMountTableSync(), dir)).map((m) => m.mountPoint);
}

/** Unmounts and detaches everything a test left under `dir`; used in afterEach before the temp dir is removed. */
export function releaseMountsAndLoops(dir: string): void {
  for (const mountPoint of mountPointsAtOrBelow(dir)) {
    try {
      execFileSync('/usr/bin/umount', ['-l', mountPoint], { stdio: 'ignore' });
    } catch {
      // already unmounted
    }
  }
  for (const device of loopDeviceNamesBackedBelow(dir)) {
    try {
      execFileSync('/usr/sbin/losetup', ['-d', device], { stdio: 'ignore' });
    } catch {
      // already detached
    }
  }
}
