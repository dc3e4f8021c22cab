import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/*
 * Synchronous: the explorer looks at every live volume after every step, and a stat or a
 * read of a small local file costs less CPU than the thread pool's round trips.
 */

/** The file written into every volume after its create; it must survive everything but the volume's own delete. */
export const MARKER_FILE = '.dhv-explore-marker';

export function isDirectory(path: string): boolean {
  try {
    return statSync(path, { throwIfNoEntry: false })?.isDirectory() ?? false;
  } catch {
    return false;
  }
}

/** The files `write NAME` puts in a volume: enough of them that removing them is work a delete is seen doing. */
export const VOLUME_DATA = { files: 64, bytes: 4096 } as const;

/** What the marker file in `dir` says (the ID of the volume it was written into), if there is one. */
export function markerIn(dir: string): string | undefined {
  try {
    return readFileSync(join(dir, MARKER_FILE), 'utf8');
  } catch {
    return undefined;
  }
}

/** Those of `paths` that are still directories. */
export function existing(paths: string[]): string[] {
  return paths.filter((p) => isDirectory(p));
}

/** Entries at most three levels below `dir` named exactly like one of `names` (a volume's ID or name). */
export function namedBelow(dir: string, names: Set<string>, depth = 3): string[] {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  const found: string[] = [];
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (names.has(entry.name)) found.push(path);
    else if (entry.isDirectory() && depth > 1) found.push(...namedBelow(path, names, depth - 1));
  }
  return found;
}
