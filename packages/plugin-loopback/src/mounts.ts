import { readFile, readdir, readlink, realpath } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { PluginFailure } from '@dhv/sdk/plugin';
import { tool } from './tools.js';

export interface MountEntry {
  /** `major:minor` of the mounted device. */
  device: string;
  mountPoint: string;
  fsType: string;
  source: string;
  options: string[];
}

// mountinfo escapes space, tab, newline and backslash as \ooo.
const unescape = (field: string) => field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));

/** The mount table of this process's mount namespace, from /proc/self/mountinfo. */
export async function readMounts(): Promise<MountEntry[]> {
  return parseMountinfo(await readFile('/proc/self/mountinfo', 'utf8'));
}

function parseMountinfo(text: string): MountEntry[] {
  const entries: MountEntry[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const [before, after] = line.split(' - ');
    const fields = before?.split(' ') ?? [];
    const tail = after?.split(' ') ?? [];
    if (fields.length < 6 || tail.length < 2) continue;
    entries.push({
      device: fields[2]!,
      mountPoint: unescape(fields[4]!),
      options: fields[5]!.split(','),
      fsType: tail[0]!,
      source: unescape(tail[1]!),
    });
  }
  return entries;
}

/**
 * `path` as the mount table names it: the kernel records mount points with every link
 * resolved, and a volumes dir reached through a link (/opt/nomad -> /data/nomad) must
 * still find its mounts. The last component is never a link (create refuses one).
 */
async function canonical(path: string): Promise<string | undefined> {
  try {
    const parent = await realpath(dirname(path));
    return parent === '/' ? `/${basename(path)}` : `${parent}/${basename(path)}`;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** What is mounted at `path`, topmost last. */
export async function mountsAt(path: string): Promise<MountEntry[]> {
  const where = await canonical(path);
  return where === undefined ? [] : (await readMounts()).filter((m) => m.mountPoint === where);
}

/** Mounts strictly below `path`. */
export async function mountsBelow(path: string): Promise<MountEntry[]> {
  const where = await canonical(path);
  return where === undefined ? [] : (await readMounts()).filter((m) => m.mountPoint.startsWith(`${where}/`));
}

export async function mount(device: string, path: string, fsType: string, options: readonly string[], signal?: AbortSignal): Promise<void> {
  await tool('mount', ['-t', fsType, ...(options.length > 0 ? ['-o', options.join(',')] : []), device, path], signal);
}

/** Unmounts `path`; a busy filesystem gives an error that says the volume is in use. */
export async function unmount(path: string, signal?: AbortSignal): Promise<void> {
  try {
    await tool('umount', [path], signal);
  } catch (err) {
    if (err instanceof PluginFailure && /busy/i.test(String(err.details.stderr ?? err.message))) {
      throw new PluginFailure(
        'EVOLUMEBUSY',
        `the volume at ${path} is in use (a process has files open or its working directory there), so it cannot be unmounted; stop the workloads using it and try again`,
        { path },
      );
    }
    throw err;
  }
}

/** Mounts of any of `devices` (major:minor) in this mount namespace other than the one at `path`: bind mounts, mostly. */
export async function mountsElsewhere(devices: ReadonlySet<string>, path: string): Promise<MountEntry[]> {
  const where = await canonical(path);
  return (await readMounts()).filter((m) => devices.has(m.device) && m.mountPoint !== where);
}

export interface ForeignMount extends MountEntry {
  /** A process in the mount namespace that holds the mount. */
  pid: number;
}

/**
 * Mounts of any of `devices` in every other mount namespace. A container sees a volume
 * through its own copy of the mount; unless mount propagation removed that copy with
 * ours, it keeps the filesystem alive after we unmount it.
 */
export async function mountsInOtherNamespaces(devices: ReadonlySet<string>): Promise<ForeignMount[]> {
  const found: ForeignMount[] = [];
  const seen = new Set([await readlink('/proc/self/ns/mnt').catch(() => '')]);
  for (const entry of await readdir('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue;
    const namespace = await readlink(`/proc/${entry}/ns/mnt`).catch(() => undefined);
    if (namespace === undefined || seen.has(namespace)) continue;
    seen.add(namespace);
    const text = await readFile(`/proc/${entry}/mountinfo`, 'utf8').catch(() => '');
    for (const m of parseMountinfo(text)) if (devices.has(m.device)) found.push({ ...m, pid: Number(entry) });
  }
  return found;
}
