import { tmpdir } from 'node:os';
import { afterEach, beforeEach } from 'vitest';
import {
  CleanupJournal,
  attachedLoopDevicesSync,
  deepestFirst,
  entriesAtOrBelow,
  readMountTableSync,
  releaseEverythingBelow,
  type LoopDevice,
  type MountEntry,
} from '@dhv/sdk/host';

/**
 * A test's own temporary directory and what a test can leave in it on the host: mounts at
 * or below it and loop devices backed by files in it. Each is made through this process's
 * cleanup journal (@dhv/sdk/host, the one dhv check and dhv demo use), recorded before it
 * exists: `removeTempDir` releases it, the end of the test file releases what a test
 * forgot (test/support/file-journal.ts), and a test process killed outright leaves its
 * journal to the next dhv command, which finishes it.
 */

/** A fresh directory `dhv-<prefix>-*` under `base` (the system temp dir); remove it with `removeTempDir`. */
export async function tempDir(prefix = 'test', base = tmpdir()): Promise<string> {
  return (await CleanupJournal.forThisProcess().makeFolder(base, `dhv-${prefix}-`)).path;
}

/**
 * Unmounts and detaches what the test left under `dir`, forgets the reference plugins'
 * records of the volumes dirs in it, then removes it; never removes through a mount it
 * could not release (the folder then stays, listed in the journal).
 */
export async function removeTempDir(dir: string | undefined): Promise<void> {
  if (!dir) return;
  await CleanupJournal.forThisProcess().removeFolder(dir);
}

/** A fresh `tempDir` for each test of the file, removed after it; the returned function gives this test's. */
export function useTempDir(prefix: string): () => string {
  let dir: string | undefined;
  beforeEach(async () => {
    dir = await tempDir(prefix);
  });
  afterEach(async () => {
    await removeTempDir(dir);
    dir = undefined;
  });
  return () => dir!;
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
