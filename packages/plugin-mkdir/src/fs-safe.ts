import { constants, type Stats } from 'node:fs';
import { fsCalls } from '@dhv/sdk/plugin';

const { close, fchmod, fchown, fstat, lstat, open } = fsCalls;

/** lstat that answers undefined for a missing path (or one under a missing directory) instead of throwing. */
export async function lstatIfExists(path: string): Promise<Stats | undefined> {
  try {
    return await lstat(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw err;
  }
}

/** An open directory: chown, chmod and stat through its descriptor (fchown, fchmod, fstat). */
export interface DirectoryHandle {
  chown(uid: number, gid: number): Promise<void>;
  chmod(mode: number): Promise<void>;
  stat(): Promise<Stats>;
  close(): Promise<void>;
}

/**
 * Opens a directory without following a link at its last component, so that chown and
 * chmod through the handle can never reach a link's target.
 */
export async function openDirectoryNoFollow(path: string): Promise<DirectoryHandle> {
  const fd = await open(path, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  return {
    chown: (uid, gid) => fchown(fd, uid, gid),
    chmod: (mode) => fchmod(fd, mode),
    stat: () => fstat(fd),
    close: () => close(fd),
  };
}

export function errnoOf(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | undefined)?.code;
}

export function describeType(stats: Stats): string {
  if (stats.isSymbolicLink()) return 'a symbolic link';
  if (stats.isFile()) return 'a regular file';
  if (stats.isFIFO()) return 'a FIFO';
  if (stats.isSocket()) return 'a socket';
  if (stats.isBlockDevice()) return 'a block device';
  if (stats.isCharacterDevice()) return 'a character device';
  return 'not a directory';
}
