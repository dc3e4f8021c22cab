import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';

/** The file written into every volume after its create; it must survive everything but the volume's own delete. */
export const MARKER_FILE = '.dhv-explore-marker';

export async function isDirectory(path: string): Promise<boolean> {
  return stat(path).then(
    (s) => s.isDirectory(),
    () => false,
  );
}

/** The files `write NAME` puts in a volume: enough of them that removing them is work a delete is seen doing. */
export const VOLUME_DATA = { files: 64, bytes: 4096 } as const;

/** What the marker file in `dir` says (the ID of the volume it was written into), if there is one. */
export async function markerIn(dir: string): Promise<string | undefined> {
  return readFile(join(dir, MARKER_FILE), 'utf8').catch(() => undefined);
}

/** Those of `paths` that are still directories. */
export async function existing(paths: string[]): Promise<string[]> {
  const found = await Promise.all(paths.map(async (p) => ((await isDirectory(p)) ? [p] : [])));
  return found.flat();
}

/** Entries at most three levels below `dir` named exactly like one of `names` (a volume's ID or name). */
export async function namedBelow(dir: string, names: Set<string>, depth = 3): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const found: string[] = [];
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (names.has(entry.name)) found.push(path);
    else if (entry.isDirectory() && depth > 1) found.push(...(await namedBelow(path, names, depth - 1)));
  }
  return found;
}
