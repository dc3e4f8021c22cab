import { realpath } from '../helpers/fs-calls.js';
import { runTool } from '../helpers/system-tools.js';
import { attachedLoopDevices, type LoopDevice } from './loop-devices.js';
import { canonicalFolder, deepestFirst, entriesAtOrBelow, readMountTable } from './mount-table.js';

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

export async function unmount(path: string, options: TeardownOptions & { lazy?: boolean } = {}): Promise<void> {
  await runTool('umount', [...(options.lazy ? ['-l'] : []), path], {
    debianPackage: 'mount',
    ...(options.signal ? { signal: options.signal } : {}),
  });
}

export async function detachLoopDevice(device: string, options: TeardownOptions = {}): Promise<void> {
  await runTool('losetup', ['--detach', device], {
    debianPackage: 'mount',
    ...(options.signal ? { signal: options.signal } : {}),
  });
}

/** What a simulated reboot takes away. Nothing else is touched. */
export interface RebootTargets {
  /** Every mount at or below each of these paths comes off. */
  paths: readonly string[];
  /** Loop devices backed by exactly these files are detached. */
  images?: readonly string[];
  /** Loop devices backed by any file below these folders are detached. */
  imageFolders?: readonly string[];
}

export interface RebootReport {
  unmounted: string[];
  detached: Array<{ device: string; backingFile: string }>;
}

/**
 * What a host reboot does to the volumes it is told about: their mounts go away (deepest
 * first, nested mounts before their parents), then the loop devices backed by their
 * images. Stops at the first failure, naming what could not be undone.
 */
export async function simulateReboot(targets: RebootTargets, options: TeardownOptions = {}): Promise<RebootReport> {
  const table = await readMountTable();
  const points = new Set<string>();
  for (const path of targets.paths) {
    const where = await canonicalFolder(path);
    if (where !== undefined) for (const m of entriesAtOrBelow(table, where)) points.add(m.mountPoint);
  }
  const unmounted: string[] = [];
  for (const { mountPoint } of deepestFirst([...points].map((mountPoint) => ({ mountPoint })))) {
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
  }
  const detached: RebootReport['detached'] = [];
  for (const loop of await loopDevicesOf(targets)) {
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
  return { unmounted, detached };
}

async function loopDevicesOf(targets: RebootTargets): Promise<LoopDevice[]> {
  const files = new Set<string>();
  for (const image of targets.images ?? []) files.add(await realpath(image).catch(() => image));
  const folders = new Set<string>();
  for (const folder of targets.imageFolders ?? []) {
    folders.add(folder);
    folders.add(await realpath(folder).catch(() => folder));
  }
  return (await attachedLoopDevices()).filter(
    (l) => !l.deleted && (files.has(l.backingFile) || [...folders].some((f) => l.backingFile.startsWith(`${f}/`))),
  );
}

/**
 * Unmounts everything at or below `dir` (lazily when a plain unmount fails) and detaches
 * every loop device backed by a file below it, carrying on past failures: the last
 * chance to leave a scratch folder clean. Returns what could not be undone.
 */
export async function releaseEverythingBelow(dir: string): Promise<string[]> {
  const problems: string[] = [];
  const where = (await canonicalFolder(dir)) ?? dir;
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
  const dirs = new Set([dir, where]);
  for (const loop of await attachedLoopDevices()) {
    if (![...dirs].some((d) => loop.backingFile.startsWith(`${d}/`))) continue;
    await detachLoopDevice(loop.device).catch((err: unknown) =>
      problems.push(`could not detach ${loop.device}: ${(err as Error).message}`),
    );
  }
  return [...new Set(problems)];
}
