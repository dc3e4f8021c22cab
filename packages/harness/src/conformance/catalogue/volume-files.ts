import { createHash, randomBytes } from 'node:crypto';
import { lstat, readFile, readdir, readlink } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { OutsideSandboxError, outsideSandboxSkip, writeInsideSandbox } from '../sandbox-writes.js';
import type { CheckContext } from '../types.js';

/** A file the suite writes into a volume to see whether a later create keeps the data. */
export const MARKER_NAME = '.dhv-check-marker';

export async function writeMarker(ctx: CheckContext, volumePath: string): Promise<string> {
  const content = randomBytes(12).toString('hex');
  try {
    writeInsideSandbox(ctx.sandboxScope, volumePath, MARKER_NAME, content);
  } catch (err) {
    if (err instanceof OutsideSandboxError) ctx.skip(outsideSandboxSkip(err));
    ctx.fail(`could not write a file into the created volume ${volumePath}: ${(err as Error).message}`);
  }
  return content;
}

/** Why the marker is gone or changed, or undefined when it is intact. */
export async function markerProblem(volumePath: string, content: string): Promise<string | undefined> {
  try {
    const now = await readFile(join(volumePath, MARKER_NAME), 'utf8');
    return now === content ? undefined : `the file written into the volume was changed`;
  } catch {
    return `the file written into the volume (${MARKER_NAME}) is gone: the volume's data was lost`;
  }
}

export async function exists(path: string): Promise<boolean> {
  return lstat(path).then(
    () => true,
    () => false,
  );
}

/** Every path under `dir`, relative; directories end with `/`. Nothing under `exclude` is listed. */
export async function listTree(dir: string, exclude: readonly string[] = [], maxEntries = 5000): Promise<Set<string>> {
  const found = new Set<string>();
  const walk = async (current: string): Promise<void> => {
    if (found.size >= maxEntries) return;
    let entries;
    try {
      entries = await readdir(current, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const full = join(current, entry.name);
      if (exclude.includes(full)) continue;
      found.add(relative(dir, full) + (entry.isDirectory() ? '/' : ''));
      if (entry.isDirectory()) await walk(full);
    }
  };
  await walk(dir);
  return found;
}

export function added(before: Set<string>, after: Set<string>): string[] {
  return [...after].filter((p) => !before.has(p)).sort();
}

/** Files above this are compared by size and inode, not content: a mounted loop image changes as its filesystem works. */
const HASHED_UP_TO_BYTES = 1024 * 1024;

/**
 * What is under `dir`, byte for byte: for each path (relative; `.` is `dir` itself) its
 * type, mode and owner, and a file's content hash or a link's target. Paths for which
 * `ignore` returns true are left out, with everything below them.
 */
export async function snapshotTree(
  dir: string,
  ignore: (relativePath: string) => boolean = () => false,
): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  const describe = async (full: string, rel: string): Promise<boolean> => {
    let s;
    try {
      s = await lstat(full);
    } catch {
      return false;
    }
    const owner = `${(s.mode & 0o7777).toString(8)} ${s.uid}:${s.gid}`;
    if (s.isSymbolicLink()) found.set(rel, `link ${owner} -> ${await readlink(full).catch(() => '?')}`);
    else if (s.isDirectory()) found.set(rel, `dir ${owner}`);
    else if (s.isFile() && s.size <= HASHED_UP_TO_BYTES) {
      const hash = createHash('sha256')
        .update(await readFile(full).catch(() => Buffer.from('unreadable')))
        .digest('hex');
      found.set(rel, `file ${owner} ${s.size} bytes sha256 ${hash}`);
    } else if (s.isFile()) found.set(rel, `file ${owner} ${s.size} bytes inode ${s.ino}`);
    else found.set(rel, `other ${owner}`);
    return s.isDirectory();
  };
  const walk = async (current: string): Promise<void> => {
    const entries = await readdir(current).catch(() => [] as string[]);
    for (const name of entries.sort()) {
      const full = join(current, name);
      const rel = relative(dir, full);
      if (ignore(rel)) continue;
      if (await describe(full, rel)) await walk(full);
    }
  };
  if (await describe(dir, '.')) await walk(dir);
  return found;
}

/** What treeChanges says when the directory snapshotted is itself gone. */
const ROOT_REMOVED = '. was removed';

/** Every path that changed, vanished or appeared between two snapshots, described for a failure message. */
export function treeChanges(before: Map<string, string>, after: Map<string, string>): string[] {
  const changes: string[] = [];
  for (const [path, was] of before) {
    const now = after.get(path);
    if (now === undefined) changes.push(`${path} was removed`);
    else if (now !== was) changes.push(`${path} changed (${was} → ${now})`);
  }
  for (const path of after.keys()) if (!before.has(path)) changes.push(`${path} appeared`);
  return changes;
}

/** What must outlive a delete: the volumes dir and the volumes that were not deleted. */
export interface Survivors {
  /** Compares with the moment `watchSurvivors` ran: `broken` is lost or changed data, `changed` the plugin's own files around it. */
  compare(): Promise<{ broken: string[]; changed: string[] }>;
}

/**
 * Records, byte for byte, each kept volume (from the path its create returned) and the
 * rest of the volumes dir, leaving out whatever belongs to the volume about to be
 * deleted (its path, and any entry named after its ID). Afterwards, a kept volume that
 * changed, or anything of the volumes dir that vanished, is lost data; a file of the
 * plugin's own that changed beside them (a shared index) is only reported.
 */
export async function watchSurvivors(
  volumesDir: string,
  keptPaths: readonly string[],
  doomed: { volumeId: string; path: string },
): Promise<Survivors> {
  const within = (path: string) => {
    const rel = relative(volumesDir, path);
    return rel === '' || rel.startsWith('..') ? undefined : rel;
  };
  const skipped = [...keptPaths, doomed.path].map(within).filter((r): r is string => r !== undefined);
  const ignore = (rel: string) =>
    rel.includes(doomed.volumeId) || skipped.some((s) => rel === s || rel.startsWith(`${s}/`));
  const before = await snapshotTree(volumesDir, ignore);
  const volumes = await Promise.all(keptPaths.map((p) => snapshotTree(p)));
  return {
    async compare() {
      const broken: string[] = [];
      const changed: string[] = [];
      const around = treeChanges(before, await snapshotTree(volumesDir, ignore));
      // Everything in it went too: listing each path would only hide that.
      if (around.includes(ROOT_REMOVED)) return { broken: ['the volumes dir itself was removed'], changed };
      for (const [i, path] of keptPaths.entries()) {
        const lost = treeChanges(volumes[i]!, await snapshotTree(path));
        if (lost.includes(ROOT_REMOVED)) broken.push(`volume ${path} was removed`);
        else if (lost.length > 0) broken.push(`volume ${path}: ${lost.slice(0, 3).join('; ')}`);
      }
      for (const change of around) {
        if (change.startsWith('. ') || change.endsWith(' was removed')) broken.push(`volumes dir: ${change}`);
        else changed.push(change);
      }
      return { broken, changed };
    },
  };
}
