import { lstat, mkdir, rm, stat } from 'node:fs/promises';
import { posix } from 'node:path';
import { goErrnoText, goSyscallMode } from '@dhv/sdk/client';

/**
 * The parts of Go's `os` and `path/filepath` that Nomad's built-in mkdir runs, with the
 * error texts Go gives them (`mkdir /x: file exists`), so the built-in fails as a real
 * agent's does.
 */

/** A Node file-system error as Go's `*PathError` prints it: `<op> <path>: <errno text>`. */
export class GoPathError extends Error {
  constructor(
    readonly op: string,
    readonly path: string,
    readonly errno: string,
  ) {
    super(`${op} ${path}: ${goErrnoText(errno)}`);
    this.name = 'GoPathError';
  }

  static from(op: string, path: string, err: unknown): GoPathError {
    const code = (err as NodeJS.ErrnoException).code;
    return new GoPathError(op, path, typeof code === 'string' ? code : (err as Error).message);
  }
}

/** Go's `filepath.Join` on Unix: empty elements dropped, the result cleaned (`""` when all are empty). */
export function goJoin(...elements: string[]): string {
  const parts = elements.filter((e) => e !== '');
  if (parts.length === 0) return '';
  return goClean(parts.join('/'));
}

/** Go's `filepath.Clean`: no trailing slash, no `.` or `..` left that can be resolved lexically. */
export function goClean(path: string): string {
  if (path === '') return '.';
  const normal = posix.normalize(path);
  return normal.length > 1 && normal.endsWith('/') ? normal.slice(0, -1) : normal;
}

function hasNul(path: string): boolean {
  return path.includes('\0');
}

/** Go's `os.Stat`: follows links; a NUL in the path is EINVAL, as Go refuses it before the kernel. */
export async function goStat(path: string): Promise<{ isDirectory(): boolean }> {
  if (hasNul(path)) throw new GoPathError('stat', path, 'EINVAL');
  try {
    return await stat(path);
  } catch (err) {
    throw GoPathError.from('stat', path, err);
  }
}

/**
 * Go's `os.MkdirAll(path, perm)`: missing parents first, each made with `perm` (the
 * umask applies), an existing directory is success, anything else existing is ENOTDIR.
 */
export async function goMkdirAll(path: string, goMode: number): Promise<void> {
  try {
    const found = await goStat(path);
    if (found.isDirectory()) return;
    throw new GoPathError('mkdir', path, 'ENOTDIR');
  } catch (err) {
    if (err instanceof GoPathError && err.op === 'mkdir') throw err;
  }
  let i = path.length;
  while (i > 0 && path[i - 1] === '/') i--;
  let j = i;
  while (j > 0 && path[j - 1] !== '/') j--;
  if (j > 1) await goMkdirAll(path.slice(0, j - 1), goMode);
  try {
    if (hasNul(path)) throw Object.assign(new Error('EINVAL'), { code: 'EINVAL' });
    await mkdir(path, { mode: goSyscallMode(goMode) });
  } catch (err) {
    const existing = await lstat(path).catch(() => undefined);
    if (existing?.isDirectory()) return;
    throw GoPathError.from('mkdir', path, err);
  }
}

/** Go's `os.RemoveAll`: a missing path and `""` are success; a path ending in `.` is refused; links are removed, not followed. */
export async function goRemoveAll(path: string): Promise<void> {
  if (path === '') return;
  if (path === '.' || path.endsWith('/.')) throw new GoPathError('RemoveAll', path, 'EINVAL');
  if (hasNul(path)) throw new GoPathError('unlinkat', path, 'EINVAL');
  try {
    await rm(path, { recursive: true, force: true });
  } catch (err) {
    throw GoPathError.from('unlinkat', path, err);
  }
}
