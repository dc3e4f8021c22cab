import { constants } from 'node:fs';
import { lstat, open, statfs, truncate, unlink } from 'node:fs/promises';
import { PluginFailure } from '../helpers/errors.js';
import { formatSize } from '../go/humanize.js';
import { hostTool, type HostCallOptions } from './host-tools.js';

/**
 * Refuses (ENOSPACE) when the filesystem holding `dir` has less room than `needed` for
 * `what`. Free space is what `df` calls available, read with statfs(2) in-process.
 */
export async function checkRoom(dir: string, needed: bigint, what: string): Promise<void> {
  const stats = await statfs(dir, { bigint: true });
  const free = stats.bavail * stats.bsize;
  if (free < needed) {
    throw new PluginFailure(
      'ENOSPACE',
      `not enough room for ${what}: it needs ${formatSize(needed)} but only ${formatSize(free)} is free on the filesystem holding ${dir}; free some space or ask for a smaller capacity`,
      { needed, free, dir },
    );
  }
}

/**
 * Makes a sparse image of `size` bytes: nothing is written, so it takes no time and no
 * disk until a filesystem uses it. O_EXCL and O_NOFOLLOW refuse anything already there.
 */
export async function createSparseImage(path: string, size: bigint): Promise<void> {
  const handle = await open(
    path,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    0o600,
  );
  try {
    await handle.truncate(Number(size));
  } finally {
    await handle.close();
  }
}

/** Grows (or shrinks back) an image to `size` bytes, sparsely; a loop device on it needs `refreshLoopCapacity`. */
export async function resizeImage(path: string, size: bigint): Promise<void> {
  await truncate(path, Number(size));
}

/** Reserves the blocks of `[offset, size)` (`fallocate --keep-size`) so the volume never runs into a full host disk. */
export async function preallocate(
  path: string,
  offset: bigint,
  size: bigint,
  options: HostCallOptions = {},
): Promise<void> {
  await hostTool(
    'fallocate',
    ['--keep-size', '--offset', String(offset), '--length', String(size - offset), path],
    options,
  );
}

/** The size of an existing image, undefined when there is none; a symlink or anything but a regular file is EUNSAFEPATH. */
export async function imageSize(path: string): Promise<bigint | undefined> {
  let stats;
  try {
    stats = await lstat(path, { bigint: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  if (!stats.isFile()) {
    throw new PluginFailure(
      'EUNSAFEPATH',
      `refusing to use ${path} as a volume image: it is not a regular file; remove it and try again`,
      { path },
    );
  }
  return stats.size;
}

/** Removes a file; one already gone is fine. */
export async function removeFile(path: string): Promise<void> {
  await unlink(path).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT') throw err;
  });
}
