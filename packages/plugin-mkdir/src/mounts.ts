import { readFile, realpath } from 'node:fs/promises';

/** Decodes the octal escapes (`\040` for a space) the kernel writes in /proc mount tables. */
function unescapeMountPath(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_m, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
}

/** Mount points listed in a /proc/<pid>/mountinfo text (the fifth field of each line). */
export function parseMountPoints(mountinfo: string): string[] {
  return mountinfo
    .split('\n')
    .map((line) => line.split(' ')[4])
    .filter((field): field is string => field !== undefined && field !== '')
    .map(unescapeMountPath);
}

/**
 * Mount points at `dir` or below it. Deleting a volume must not reach into a filesystem
 * someone mounted inside it (a bind mount left by a workload, a disk): removing
 * recursively would erase that filesystem's files too. Returns [] where /proc is absent.
 */
export async function mountPointsWithin(dir: string, mountinfoPath = '/proc/self/mountinfo'): Promise<string[]> {
  let text: string;
  try {
    text = await readFile(mountinfoPath, 'utf8');
  } catch {
    return [];
  }
  const real = await realpath(dir);
  return parseMountPoints(text).filter((point) => point === real || point.startsWith(`${real}/`));
}
