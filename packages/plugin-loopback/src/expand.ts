import { access, writeFile } from 'node:fs/promises';
import { PluginFailure, formatSize, type HandlerContext } from '@dhv/sdk/plugin';
import {
  checkRoom,
  growFilesystem,
  preallocate,
  refreshLoopCapacity,
  removeFile,
  resizeImage,
  type MountedFilesystem,
} from '@dhv/sdk/host';

export interface MountedVolume extends MountedFilesystem {
  imagePath: string;
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
export async function expandVolume(e: Expansion, step: HandlerContext['step'], signal?: AbortSignal): Promise<void> {
  await checkRoom(e.stateDir, e.to - e.from, `growing the volume from ${formatSize(e.from)} to ${formatSize(e.to)}`);
  const marker = growthMarker(e.imagePath);
  let filesystemGrown = false;
  await step(
    'grow-image',
    async () => {
      await writeFile(marker, `${e.from} ${e.to}\n`, { mode: 0o600 });
      await resizeImage(e.imagePath, e.to);
    },
    async () => {
      if (filesystemGrown) return;
      await resizeImage(e.imagePath, e.from);
      await refreshLoopCapacity(e.device);
      await removeFile(marker);
    },
  );
  if (e.preallocate) await preallocate(e.imagePath, e.from, e.to, { signal });
  await refreshLoopCapacity(e.device, { signal });

  await step('grow-filesystem', async () => {
    await growFilesystem(e, {
      signal,
      what: `grow ${e.mountPath} from ${formatSize(e.from)} to ${formatSize(e.to)}`,
    }).catch((err: unknown) => {
      // Grown before its tool was killed: shrinking the image now would cut the filesystem
      // short. The marker stays, and the next create finishes the growth.
      if (err instanceof PluginFailure && err.details.filesystemGrown === true) filesystemGrown = true;
      throw err;
    });
    filesystemGrown = true;
    await removeFile(marker);
  });
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
  await refreshLoopCapacity(v.device, { signal });
  await growFilesystem(v, {
    signal,
    what: `finish growing ${v.mountPath} (a create was interrupted while growing it)`,
  });
  await removeFile(marker);
  return true;
}
