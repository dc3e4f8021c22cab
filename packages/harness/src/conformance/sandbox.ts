import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isStrictlyInside, runTool } from '@dhv/sdk';

/**
 * The suite's scratch space: one temporary root per run, a directory per check under
 * it, and a forced removal that also undoes what a loopback plugin leaves behind
 * (mounts and loop devices) when its own delete did not.
 */
export async function makeRunRoot(parent?: string): Promise<string> {
  return mkdtemp(join(parent ?? tmpdir(), 'dhv-check-'));
}

/** Unmounts everything mounted at or under `dir` (deepest first) and detaches loop devices backed by files under it. */
export async function releaseSystemResources(dir: string): Promise<string[]> {
  const problems: string[] = [];
  for (const mountPoint of await mountsUnder(dir)) {
    try {
      await runTool('umount', [mountPoint], { debianPackage: 'mount' });
    } catch {
      try {
        await runTool('umount', ['-l', mountPoint], { debianPackage: 'mount' });
      } catch (err) {
        problems.push(`could not unmount ${mountPoint}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  }
  for (const device of await loopDevicesBackedUnder(dir)) {
    try {
      await runTool('losetup', ['-d', device], { debianPackage: 'mount' });
    } catch (err) {
      problems.push(`could not detach ${device}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return problems;
}

/** Releases mounts and loop devices under `dir`, then removes it. Returns what could not be undone. */
export async function forceRemove(dir: string): Promise<string[]> {
  const problems = await releaseSystemResources(dir);
  try {
    await rm(dir, { recursive: true, force: true, maxRetries: 3 });
  } catch (err) {
    problems.push(`could not remove ${dir}: ${err instanceof Error ? err.message : String(err)}`);
  }
  return problems;
}

const inside = (dir: string, path: string) => path === dir || isStrictlyInside(dir, path);

async function mountsUnder(dir: string): Promise<string[]> {
  let table: string;
  try {
    table = await readFile('/proc/self/mountinfo', 'utf8');
  } catch {
    return [];
  }
  const points = table
    .split('\n')
    .map((line) => line.split(' ')[4])
    .filter((p): p is string => p !== undefined)
    .map(unescapeMountPath)
    .filter((p) => inside(dir, p));
  return [...new Set(points)].sort((a, b) => b.length - a.length);
}

/** mountinfo writes space, tab, newline and backslash as octal escapes. */
function unescapeMountPath(path: string): string {
  return path.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

async function loopDevicesBackedUnder(dir: string): Promise<string[]> {
  let names: string[];
  try {
    names = (await readdir('/sys/block')).filter((n) => n.startsWith('loop'));
  } catch {
    return [];
  }
  const devices: string[] = [];
  for (const name of names) {
    try {
      const backing = (await readFile(`/sys/block/${name}/loop/backing_file`, 'utf8')).trim().replace(/ \(deleted\)$/, '');
      if (inside(dir, backing)) devices.push(`/dev/${name}`);
    } catch {
      // Not attached.
    }
  }
  return devices;
}
