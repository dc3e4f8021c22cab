import { basename, dirname, join } from 'node:path';
import { close, fsync, open, rename, unlink, writeFile } from './fs-calls.js';

/**
 * Replaces the file at `path` whole: its text goes to a file of its own beside it, which is
 * then renamed over the old one, so a reader (or a crash) finds the old text or the new,
 * never part of either. With `durable`, the new text and the rename are on disk before it
 * returns. A failure leaves the old file and no partial one.
 */
export async function replaceFile(
  path: string,
  text: string,
  { mode = 0o600, durable = false }: { mode?: number; durable?: boolean } = {},
): Promise<void> {
  const partial = join(dirname(path), `.${basename(path)}.${process.pid}.partial`);
  try {
    const fd = await open(partial, 'w', mode);
    try {
      await writeFile(fd, text);
      if (durable) await fsync(fd);
    } finally {
      await close(fd);
    }
    await rename(partial, path);
  } catch (err) {
    await unlink(partial).catch(() => {});
    throw err;
  }
  if (durable) {
    const folder = await open(dirname(path), 'r');
    try {
      await fsync(folder);
    } finally {
      await close(folder);
    }
  }
}
