import { randomBytes } from 'node:crypto';
import { lstat, readFile, readdir, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { CheckContext } from '../types.js';

/** A file the suite writes into a volume to see whether a later create keeps the data. */
export const MARKER_NAME = '.dhv-check-marker';

export async function writeMarker(ctx: CheckContext, volumePath: string): Promise<string> {
  const content = randomBytes(12).toString('hex');
  try {
    await writeFile(join(volumePath, MARKER_NAME), content);
  } catch (err) {
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
