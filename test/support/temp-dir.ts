import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  attachedLoopDevicesSync,
  deepestFirst,
  entriesAtOrBelow,
  readMountTableSync,
  releaseEverythingBelow,
  type LoopDevice,
  type MountEntry,
} from '@dhv/sdk/host';
import { forgetDiskRecordsBelow } from './plugin-disk-records.js';

/**
 * A test's own temporary directory and what a test can leave in it on the host: mounts at
 * or below it and loop devices backed by files in it, released (by @dhv/sdk/host, the
 * teardown the plugins and the agent use) before the directory goes.
 */

/** A fresh directory `dhv-<prefix>-*` under `base` (the system temp dir); remove it with `removeTempDir`. */
export function tempDir(prefix = 'test', base = tmpdir()): Promise<string> {
  return mkdtemp(join(base, `dhv-${prefix}-`));
}

/** Releases what the test left under `dir`, forgets the reference plugins' records of the volumes dirs in it, then removes it; never removes through a mount still there. */
export async function removeTempDir(dir: string | undefined): Promise<void> {
  if (!dir) return;
  await releaseMountsAndLoops(dir);
  await forgetDiskRecordsBelow(dir);
  if (mountsAtOrBelowSync(dir).length === 0) await rm(dir, { recursive: true, force: true });
}

/** Unmounts and detaches everything a test left under `dir`; returns what could not be undone. */
export function releaseMountsAndLoops(dir: string): Promise<string[]> {
  return releaseEverythingBelow(dir);
}

/** Mounts at `dir` or below it (a mount at `dir` itself counts), deepest first. */
export function mountsAtOrBelowSync(dir: string): MountEntry[] {
  return deepestFirst(entriesAtOrBelow(readMountTableSync(), dir));
}

/** Loop devices whose backing file lies below `dir`, found by backing file through sysfs. */
export function loopDevicesBackedBelowSync(dir: string): LoopDevice[] {
  return attachedLoopDevicesSync().filter((l) => l.backingFile.startsWith(`${dir}/`));
}

/** The mount points of `mountsAtOrBelowSync`. */
export function mountPointsAtOrBelow(dir: string): string[] {
  return mountsAtOrBelowSync(dir).map((m) => m.mountPoint);
}

/** The device names of `loopDevicesBackedBelowSync`. */
export function loopDeviceNamesBackedBelow(dir: string): string[] {
  return loopDevicesBackedBelowSync(dir).map((l) => l.device);
}
