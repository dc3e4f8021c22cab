import { relative, isAbsolute, join, sep } from 'node:path';
import { lstat, realpath } from '../helpers/fs-calls.js';

/**
 * The one folder a teardown may act in (the agent's volumes dir, a check's scratch dir),
 * with its links resolved once, when it is trusted: at the start of the command, or when
 * the folder was made. Mounts and loop devices are matched against `canonical` as text,
 * since the kernel names them with every link resolved; a link planted inside the folder
 * later never moves the scope anywhere else.
 */
export interface TeardownScope {
  dir: string;
  canonical: string;
}

/** The scope of `dir`, resolved now; undefined when it does not exist. */
export async function teardownScope(dir: string): Promise<TeardownScope | undefined> {
  const canonical = await realpath(dir).catch(() => undefined);
  return canonical === undefined ? undefined : { dir, canonical };
}

/**
 * `path` in the kernel's terms, when it is inside the scope and reached without a link:
 * each component below the scope is looked at with lstat, and a link met on the way (the
 * path itself included) leaves the path out. A component that does not exist ends the
 * walk: nothing can be mounted below it. Undefined for a path outside the scope, and for
 * the scope's folder itself (a volume is never the whole volumes dir).
 */
export async function inScope(scope: TeardownScope, path: string): Promise<string | undefined> {
  // A relative path would be read from the caller's folder: it names nothing in the scope.
  if (!isAbsolute(path)) return undefined;
  const rel = relative(scope.dir, path);
  if (rel === '' || rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return undefined;
  let at = scope.canonical;
  for (const part of rel.split(sep)) {
    at = join(at, part);
    const info = await lstat(at).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return 'missing' as const;
      throw err;
    });
    if (info === 'missing') break;
    if (info.isSymbolicLink()) return undefined;
  }
  return join(scope.canonical, rel);
}

/** `point` is `dir` or below it (both in the kernel's terms). */
export function atOrBelow(dir: string, point: string): boolean {
  return point === dir || point.startsWith(dir === '/' ? '/' : `${dir}/`);
}
