import { closeSync, fsyncSync, openSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { close, fsync, open, rename, unlink, writeFile } from './fs-calls.js';

/** How the partial file a replace writes beside its target begins; a reader of a folder skips such names. */
export const PARTIAL_PREFIX = '.tmp-';

interface ReplaceOptions {
  mode?: number;
  /** The new text and the rename are on disk (fsync of the file, then of its folder) before it returns. */
  durable?: boolean;
}

/**
 * Replaces the file at `path` whole: its text goes to a file of its own beside it, which is
 * then renamed over the old one, so a reader (or a crash) finds the old text or the new,
 * never part of either. With `durable`, the new text and the rename are on disk before it
 * returns. A failure leaves the old file and no partial one; a crash may leave a partial
 * one, named by `partialFileWriter` for its writer.
 */
export async function replaceFile(
  path: string,
  text: string,
  { mode = 0o600, durable = false }: ReplaceOptions = {},
): Promise<void> {
  const partial = partialFileOf(path);
  try {
    // 'wx': a partial name is new each time, so a file already there is no writer's to reuse.
    const fd = await open(partial, 'wx', mode);
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

/** The same, synchronously, for a writer that cannot wait (a journal saved on the way out, a supervisor's run file). */
export function replaceFileSync(
  path: string,
  text: string,
  { mode = 0o600, durable = false }: ReplaceOptions = {},
): void {
  const partial = partialFileOf(path);
  try {
    const fd = openSync(partial, 'wx', mode);
    try {
      writeFileSync(fd, text);
      if (durable) fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(partial, path);
  } catch (err) {
    try {
      unlinkSync(partial);
    } catch {}
    throw err;
  }
  if (durable) {
    const folder = openSync(dirname(path), 'r');
    try {
      fsyncSync(folder);
    } finally {
      closeSync(folder);
    }
  }
}

/**
 * `.tmp-<pid>-<random>-<name>.partial`: the writer's PID first, so the partial files of dead
 * writers can be swept, and no extension of the target's, so a reader that lists `*.json` skips it.
 */
function partialFileOf(path: string): string {
  const unique = Math.floor(Math.random() * 0x1_0000_0000)
    .toString(16)
    .padStart(8, '0');
  return join(dirname(path), `${PARTIAL_PREFIX}${process.pid}-${unique}-${basename(path)}.partial`);
}

/** The PID that wrote a partial file, so the leftovers of dead writers can be swept. */
export function partialFileWriter(name: string): number | undefined {
  if (!name.startsWith(PARTIAL_PREFIX)) return undefined;
  const pid = Number(name.slice(PARTIAL_PREFIX.length).split('-')[0]);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}
