import { access, writeFile } from 'node:fs/promises';
import { PluginFailure, formatSize, type UndoStack } from '@dhv/sdk/plugin';
import type { FilesystemType, MountOption } from './parameters.js';
import { checkRoom, growImage, preallocate, removeFile } from './image.js';
import { refreshLoopCapacity } from './loop-device.js';
import { growFilesystemOffline, growFilesystemOnline } from './filesystem.js';
import { mount, unmount } from './mounts.js';
import type { StepHook } from './steps.js';

export interface MountedVolume {
  imagePath: string;
  mountPath: string;
  device: string;
  fs: FilesystemType;
  mountOptions: MountOption[];
}

export interface Expansion extends MountedVolume {
  stateDir: string;
  from: bigint;
  to: bigint;
  preallocate: boolean;
}

/**
 * Marks an image whose filesystem has not yet grown into it. A create killed by the
 * deadline between the two leaves it, and the next create finishes the growth.
 */
export const growthMarker = (imagePath: string) => `${imagePath}.growing`;

/**
 * Grows a mounted volume's image, then its filesystem, keeping the data. Never shrinks.
 * Until the filesystem has grown, a failure puts the image back to its old size.
 */
export async function expandVolume(
  e: Expansion,
  undo: UndoStack,
  afterStep: StepHook,
  signal?: AbortSignal,
): Promise<void> {
  await checkRoom(e.stateDir, e.to - e.from, `growing the volume from ${formatSize(e.from)} to ${formatSize(e.to)}`);
  const marker = growthMarker(e.imagePath);
  let filesystemGrown = false;
  await writeFile(marker, `${e.from} ${e.to}\n`, { mode: 0o600 });
  await growImage(e.imagePath, e.to);
  undo.push(`grow the image to ${formatSize(e.to)}`, async () => {
    if (filesystemGrown) return;
    await growImage(e.imagePath, e.from);
    await refreshLoopCapacity(e.device);
    await removeFile(marker);
  });
  if (e.preallocate) await preallocate(e.imagePath, e.from, e.to, signal);
  await refreshLoopCapacity(e.device, signal);
  await afterStep('grow-image');

  await growFilesystem(e, `grow ${e.mountPath} from ${formatSize(e.from)} to ${formatSize(e.to)}`, signal);
  filesystemGrown = true;
  await removeFile(marker);
  await afterStep('grow-filesystem');
}

/** Finishes a growth a killed create left half done (the image grew, the filesystem may not have). */
export async function finishInterruptedGrowth(v: MountedVolume, signal?: AbortSignal): Promise<boolean> {
  const marker = growthMarker(v.imagePath);
  if (
    !(await access(marker).then(
      () => true,
      () => false,
    ))
  )
    return false;
  await refreshLoopCapacity(v.device, signal);
  await growFilesystem(v, `finish growing ${v.mountPath} (a create was interrupted while growing it)`, signal);
  await removeFile(marker);
  return true;
}

/**
 * Grows the filesystem to fill its loop device: online where the kernel allows (xfs
 * always, ext4 through resize2fs), else, for ext4, offline while no one uses the volume.
 * Growing to the size it already has does nothing.
 */
async function growFilesystem(v: MountedVolume, what: string, signal?: AbortSignal): Promise<void> {
  try {
    await growFilesystemOnline(v.fs, v.device, v.mountPath, signal);
    return;
  } catch (online) {
    if (v.fs === 'xfs' || signal?.aborted) {
      throw new PluginFailure('EEXPAND', `cannot ${what}: growing the xfs filesystem failed: ${firstLine(online)}`, {
        mountPath: v.mountPath,
      });
    }
    try {
      await unmount(v.mountPath, signal);
    } catch (busy) {
      const code = busy instanceof PluginFailure ? busy.code : undefined;
      throw new PluginFailure(
        'EEXPANDBUSY',
        `cannot ${what}: its ext4 filesystem cannot grow while mounted (${firstLine(online)}), ` +
          (code === 'EVOLUMEBUSY'
            ? 'and the volume is in use, so it cannot be unmounted to grow offline; stop the workloads using it and create again'
            : `and unmounting it failed: ${firstLine(busy)}`),
        { mountPath: v.mountPath },
      );
    }
  }
  try {
    await growFilesystemOffline(v.device, signal);
  } finally {
    await mount(v.device, v.mountPath, v.fs, v.mountOptions);
  }
}

function firstLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0]!.trim();
}
