import { existsSync } from 'node:fs';
import { basename } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { runTool } from '../helpers/system-tools.js';
import { unmount } from './mounts.js';
import { attachedLoopDevices, type LoopDevice } from './loop-devices.js';
import {
  canonicalFolder,
  deepestFirst,
  describeMount,
  entriesAt,
  entriesAtOrBelow,
  isRecordedMount,
  readMountTable,
  type MountIdentity,
} from './mount-table.js';
import { atOrBelow, inScope, teardownScope, type TeardownScope } from './scope.js';

/** A host operation that failed, with what it was working on. */
export class HostError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'HostError';
  }
}

export interface TeardownOptions {
  signal?: AbortSignal;
}

/**
 * How long a detach waits for the device to let go of its image. The kernel only marks a
 * device still open elsewhere (a plugin's mkfs or e2fsck being killed, the last close of an
 * unmount) to clear at its last close, and `losetup --detach` returns at once.
 */
const DETACH_SETTLE_MS = 3_000;

/** Detaches a loop device, and returns once it has let go of its image (or after DETACH_SETTLE_MS). */
export async function detachLoopDevice(device: string, options: TeardownOptions = {}): Promise<void> {
  const backing = `/sys/block/${basename(device)}/loop/backing_file`;
  try {
    await runTool('losetup', ['--detach', device], {
      debianPackage: 'mount',
      ...(options.signal ? { signal: options.signal } : {}),
    });
  } catch (err) {
    // A loop device detached by someone else since it was listed (an operator, a clear at last close): done.
    const isFreeLoopDevice = existsSync(`/sys/block/${basename(device)}`) && !existsSync(backing);
    if (!options.signal?.aborted && isFreeLoopDevice) return;
    throw err;
  }
  for (let waited = 0; waited < DETACH_SETTLE_MS && existsSync(backing); waited += 20) await sleep(20);
}

/**
 * What a simulated reboot takes away. Nothing else is touched: every path must lie inside
 * `scope`, reached without a link, or it is left alone (and reported as skipped).
 */
export interface RebootTargets {
  /** The folder everything taken away lies in (the volumes dir); its links resolved now when given as a path. */
  scope: string | TeardownScope;
  /** Every mount at or below each of these paths comes off (only those in `mounts`, when given). */
  paths: readonly string[];
  /**
   * The mounts that may come off, as they were recorded when made: each is checked against
   * the live mount table just before (same mount ID, device and place), and any other
   * mount at or below `paths` is left mounted and reported.
   */
  mounts?: readonly MountIdentity[];
  /** Loop devices backed by exactly these files are detached, also when the file was unlinked since. */
  images?: readonly string[];
  /** Loop devices backed by any file below these folders are detached. */
  imageFolders?: readonly string[];
}

export interface RebootReport {
  unmounted: string[];
  detached: Array<{ device: string; backingFile: string }>;
  /** Paths left alone: outside the scope, the scope itself, or reached through a link. */
  skipped: string[];
  /** Mounts at or below the paths that `mounts` does not name, left mounted: what is mounted there, and why. */
  leftMounted: string[];
}

/**
 * What a host reboot does to the volumes it is told about: their mounts go away (deepest
 * first, nested mounts before their parents), then the loop devices backed by their
 * images. Stops at the first failure, naming what could not be undone.
 */
export async function simulateReboot(targets: RebootTargets, options: TeardownOptions = {}): Promise<RebootReport> {
  const scope = typeof targets.scope === 'string' ? await teardownScope(targets.scope) : targets.scope;
  const skipped: string[] = [];
  const inside = async (paths: readonly string[] | undefined) => {
    const found: string[] = [];
    for (const path of paths ?? []) {
      const where = scope && (await inScope(scope, path));
      if (where) found.push(where);
      else skipped.push(path);
    }
    return found;
  };
  const table = await readMountTable();
  const points = new Set<string>();
  for (const where of await inside(targets.paths))
    for (const m of entriesAtOrBelow(table, where)) points.add(m.mountPoint);
  const images = new Set(await inside(targets.images));
  const imageFolders = await inside(targets.imageFolders);
  const unmounted: string[] = [];
  const leftMounted: string[] = [];
  const unmountOne = async (mountPoint: string) => {
    try {
      await unmount(mountPoint, options);
    } catch (err) {
      throw new HostError(
        'REBOOT_FAILED',
        `could not unmount ${mountPoint}: ${(err as Error).message}; something may still be using it (see fuser -m ${mountPoint})`,
        {
          mountPoint,
        },
      );
    }
    unmounted.push(mountPoint);
  };
  for (const { mountPoint } of deepestFirst([...points].map((mountPoint) => ({ mountPoint })))) {
    if (!targets.mounts) {
      await unmountOne(mountPoint);
      continue;
    }
    // umount takes the top mount at a place: it comes off only while that one, as the table reads just before, is recorded.
    for (;;) {
      const top = entriesAt(await readMountTable(), mountPoint).at(-1);
      if (!top) break;
      if (!(await someAsync(targets.mounts, (r) => isRecordedMount(top, r)))) {
        leftMounted.push(`${mountPoint}: ${describeMount(top)} is not a mount the volume's create or restore recorded`);
        break;
      }
      await unmountOne(mountPoint);
    }
  }
  const detached: RebootReport['detached'] = [];
  for (const loop of await loopDevicesOf(images, imageFolders)) {
    try {
      await detachLoopDevice(loop.device, options);
    } catch (err) {
      throw new HostError(
        'REBOOT_FAILED',
        `could not detach ${loop.device} (backed by ${loop.backingFile}): ${(err as Error).message}`,
        {
          device: loop.device,
          backingFile: loop.backingFile,
        },
      );
    }
    detached.push({ device: loop.device, backingFile: loop.backingFile });
  }
  return { unmounted, detached, skipped, leftMounted };
}

async function someAsync<T>(items: readonly T[], test: (item: T) => Promise<boolean>): Promise<boolean> {
  for (const item of items) if (await test(item)) return true;
  return false;
}

/** Paths in the kernel's terms: a device whose image was unlinked still names the path it had. */
async function loopDevicesOf(images: ReadonlySet<string>, folders: readonly string[]): Promise<LoopDevice[]> {
  return (await attachedLoopDevices()).filter(
    (l) => images.has(l.backingFile) || folders.some((f) => l.backingFile.startsWith(`${f}/`)),
  );
}

/**
 * Unmounts everything at or below `dir` (lazily when a plain unmount fails) and detaches
 * every loop device backed by a file below it, carrying on past failures: the last
 * chance to leave a scratch folder clean. Returns what could not be undone. `canonical`
 * is `dir` in the kernel's terms, taken when the folder was made: given, a link planted
 * at `dir` or above it since never leads the teardown elsewhere.
 */
export async function releaseEverythingBelow(dir: string, canonical?: string): Promise<string[]> {
  const problems: string[] = [];
  const where = canonical ?? (await canonicalFolder(dir)) ?? dir;
  for (let pass = 0; pass < 3; pass++) {
    const mounts = deepestFirst(entriesAtOrBelow(await readMountTable(), where));
    if (mounts.length === 0) break;
    for (const { mountPoint } of mounts) {
      await unmount(mountPoint).catch(() =>
        unmount(mountPoint, { lazy: true }).catch((err: unknown) =>
          problems.push(`could not unmount ${mountPoint}: ${(err as Error).message}`),
        ),
      );
    }
  }
  for (const loop of await attachedLoopDevices()) {
    if (!atOrBelow(where, loop.backingFile) || loop.backingFile === where) continue;
    await detachLoopDevice(loop.device).catch((err: unknown) =>
      problems.push(`could not detach ${loop.device}: ${(err as Error).message}`),
    );
  }
  return [...new Set(problems)];
}
