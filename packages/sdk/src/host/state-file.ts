import { readFile } from '../helpers/fs-calls.js';
import { replaceFile } from '../helpers/replace-file.js';
import { PluginFailure } from '../helpers/errors.js';
import { withVolumeLock } from '../helpers/volume-lock.js';

/**
 * A plugin's own JSON state (a registry of its volumes, say), changed by one process at a
 * time and never seen half-written: `<path>.lock` is held from the read to the rename, and
 * the new text is written to a file of its own, flushed, and renamed over the old one. A
 * crash at any point leaves the old state or the new one.
 */
export interface StateFileOptions {
  signal?: AbortSignal;
  /** The mode of a new state file. Default 0600: a plugin's state is its own. */
  mode?: number;
}

/** The state as last written, or undefined when there is none yet. */
export async function readStateFile<T>(path: string): Promise<T | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    return JSON.parse(text) as T;
  } catch (err) {
    throw new PluginFailure(
      'ESTATEDAMAGED',
      `the state file ${path} is not JSON (${(err as Error).message}); move it aside to start afresh, or restore it from a backup`,
      { path },
    );
  }
}

/**
 * Reads the state, hands it to `change` (undefined when there is none yet) and writes what
 * `change` returns, all under the state file's lock; returns what was written. A `change`
 * that throws leaves the state as it was.
 */
export async function updateStateFile<T>(
  path: string,
  change: (current: T | undefined) => T | Promise<T>,
  options: StateFileOptions = {},
): Promise<T> {
  return withVolumeLock(
    `${path}.lock`,
    async () => {
      const next = await change(await readStateFile<T>(path));
      await replaceFile(path, `${JSON.stringify(next, null, 2)}\n`, { mode: options.mode ?? 0o600, durable: true });
      return next;
    },
    options.signal ? { signal: options.signal } : {},
  );
}
