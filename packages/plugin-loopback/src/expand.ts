import { PluginFailure, formatSize } from '@dhv/sdk/plugin';
import type { FilesystemType, MountOption } from './parameters.js';
import type { UndoStack } from './undo-stack.js';
import { checkRoom, growImage, preallocate } from './image.js';
import { refreshLoopCapacity } from './loop-device.js';
import { growFilesystemOffline, growFilesystemOnline } from './filesystem.js';
import { mount, unmount } from './mounts.js';
import type { StepHook } from './steps.js';

export interface Expansion {
  imagePath: string;
  stateDir: string;
  mountPath: string;
  device: string;
  fs: FilesystemType;
  from: bigint;
  to: bigint;
  preallocate: boolean;
  mountOptions: MountOption[];
}

/**
 * Grows a mounted volume's image, then its filesystem, keeping the data: online where
 * the kernel allows (xfs always, ext4 through resize2fs), else offline while no one uses
 * the volume. Never shrinks. Until the filesystem has grown, a failure puts the image
 * back to its old size.
 */
export async function expandVolume(e: Expansion, undo: UndoStack, afterStep: StepHook, signal?: AbortSignal): Promise<void> {
  await checkRoom(e.stateDir, e.to - e.from, `growing the volume from ${formatSize(e.from)} to ${formatSize(e.to)}`);
  let filesystemGrown = false;
  await growImage(e.imagePath, e.to);
  undo.push(`grow the image to ${formatSize(e.to)}`, async () => {
    if (filesystemGrown) return;
    await growImage(e.imagePath, e.from);
    await refreshLoopCapacity(e.device);
  });
  if (e.preallocate) await preallocate(e.imagePath, e.from, e.to, signal);
  await refreshLoopCapacity(e.device, signal);
  await afterStep('grow-image');

  try {
    await growFilesystemOnline(e.fs, e.device, e.mountPath, signal);
  } catch (online) {
    if (e.fs === 'xfs' || signal?.aborted) throw expandFailure(e, online);
    try {
      await unmount(e.mountPath, signal);
    } catch (busy) {
      const code = busy instanceof PluginFailure ? busy.code : undefined;
      throw new PluginFailure(
        'EEXPANDBUSY',
        `cannot grow ${e.mountPath} from ${formatSize(e.from)} to ${formatSize(e.to)}: its ext4 filesystem cannot grow while mounted (${firstLine(online)}), ` +
          (code === 'EVOLUMEBUSY'
            ? 'and the volume is in use, so it cannot be unmounted to grow offline; stop the workloads using it and create again'
            : `and unmounting it failed: ${firstLine(busy)}`),
        { mountPath: e.mountPath },
      );
    }
    try {
      await growFilesystemOffline(e.device, signal);
    } finally {
      await mount(e.device, e.mountPath, e.fs, e.mountOptions);
    }
  }
  filesystemGrown = true;
  await afterStep('grow-filesystem');
}

function firstLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0]!.trim();
}

function expandFailure(e: Expansion, err: unknown): PluginFailure {
  return new PluginFailure(
    'EEXPAND',
    `could not grow the ${e.fs} filesystem of ${e.mountPath} from ${formatSize(e.from)} to ${formatSize(e.to)}: ${err instanceof Error ? err.message : String(err)}`,
    { mountPath: e.mountPath },
  );
}
