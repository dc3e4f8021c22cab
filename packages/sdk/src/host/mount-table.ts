import { readFileSync } from 'node:fs';
import { realpath, stat } from '../helpers/fs-calls.js';
import { basename, dirname } from 'node:path';

/** One line of /proc/<pid>/mountinfo (proc(5)), paths decoded. */
export interface MountEntry {
  mountId: number;
  parentId: number;
  /** `major:minor` of the mounted device. */
  device: string;
  /** The directory of the filesystem that is mounted (`/` unless a bind mount of a subfolder). */
  root: string;
  mountPoint: string;
  options: string[];
  fsType: string;
  source: string;
  superOptions: string[];
}

export const MOUNTINFO = '/proc/self/mountinfo';

/**
 * What tells one mount from another at the same place, as systemd and the kubelet track
 * theirs: the kernel's mount ID and the device mounted, and the birth time of the mounted
 * filesystem's root. The kernel hands a freed mount ID and a freed anonymous device number
 * (tmpfs) to the next mount, so a tmpfs unmounted and replaced by another at the same
 * path can get both back; its root's birth time differs.
 */
export interface MountIdentity {
  mountId: number;
  device: string;
  mountPoint: string;
  fsType: string;
  source: string;
  /** Birth time of the mounted root in nanoseconds, "0" where the filesystem keeps none. */
  rootBirth: string;
}

/** The birth time of what is mounted on top at `mountPoint`, "0" when unknown. */
async function rootBirthAt(mountPoint: string): Promise<string> {
  return stat(mountPoint, { bigint: true }).then(
    (s) => s.birthtimeNs.toString(),
    () => '0',
  );
}

/** The identity of `entry`, which must be the top mount at its place (its root is looked at through the path). */
export async function identityOf({ mountId, device, mountPoint, fsType, source }: MountEntry): Promise<MountIdentity> {
  return { mountId, device, mountPoint, fsType, source, rootBirth: await rootBirthAt(mountPoint) };
}

/** The same filesystem as `recorded` (its device, and its root's birth time when recorded), whatever its mount ID. */
export async function sameFilesystem(top: MountEntry, recorded: MountIdentity): Promise<boolean> {
  if (top.device !== recorded.device || top.mountPoint !== recorded.mountPoint) return false;
  return recorded.rootBirth === '0' || (await rootBirthAt(top.mountPoint)) === recorded.rootBirth;
}

/** `top` (the top mount at its place now) is the very mount recorded: same mount ID, device, place and root. */
export async function isRecordedMount(top: MountEntry, recorded: MountIdentity): Promise<boolean> {
  return top.mountId === recorded.mountId && (await sameFilesystem(top, recorded));
}

/** How a mount reads in a message: `ext4 /dev/loop3 (mount 812, device 7:3)`. */
export const describeMount = (m: Omit<MountIdentity, 'rootBirth'>) =>
  `${m.fsType} ${m.source} (mount ${m.mountId}, device ${m.device})`;

/**
 * Undoes the kernel's escaping: every byte it escapes (space, tab, newline, backslash)
 * is written as `\ooo`, and the bytes of a path are UTF-8. The field is the table's bytes
 * read as latin1; every other byte (a name's UTF-8 included) is written as it is.
 */
export function unescapeMountField(field: string): string {
  if (!/[\\\x80-\xff]/.test(field)) return field;
  const bytes = Buffer.from(
    field.replace(/\\([0-7]{3})/g, (_m, octal: string) => String.fromCharCode(Number.parseInt(octal, 8) & 0xff)),
    'latin1',
  );
  return bytes.toString('utf8');
}

/** Parses a mountinfo text; lines that do not have mountinfo's shape are skipped. */
export function parseMountinfo(text: string): MountEntry[] {
  const entries: MountEntry[] = [];
  for (const line of text.split('\n')) {
    const separator = line.indexOf(' - ');
    if (separator < 0) continue;
    const fields = line.slice(0, separator).split(' ');
    const tail = line.slice(separator + 3).split(' ');
    const [mountId, parentId, device, root, mountPoint, options] = fields;
    const [fsType, source, superOptions] = tail;
    if (
      options === undefined ||
      mountPoint === undefined ||
      root === undefined ||
      device === undefined ||
      parentId === undefined ||
      mountId === undefined
    )
      continue;
    if (fsType === undefined || source === undefined) continue;
    entries.push({
      mountId: Number(mountId),
      parentId: Number(parentId),
      device,
      root: unescapeMountField(root),
      mountPoint: unescapeMountField(mountPoint),
      options: options.split(','),
      fsType,
      source: unescapeMountField(source),
      superOptions: superOptions?.split(',') ?? [],
    });
  }
  return entries;
}

/**
 * The mount table of this process's mount namespace; [] where /proc is not mounted. Read
 * synchronously all the same: the kernel writes it out as it is read, never waiting on a
 * disk, and a read through libuv's threadpool is four round trips (open, fstat, read,
 * close), each a wakeup of a worker and of the event loop, for every one of the hundreds
 * of looks a `dhv check` takes.
 */
export async function readMountTable(file = MOUNTINFO): Promise<MountEntry[]> {
  return readMountTableSync(file);
}

export function readMountTableSync(file = MOUNTINFO): MountEntry[] {
  try {
    // latin1 keeps every byte as one character until unescapeMountField decodes UTF-8.
    return parseMountinfo(readFileSync(file, 'latin1'));
  } catch {
    return [];
  }
}

/**
 * `path` as the mount table names it (the kernel records mount points with every link
 * resolved): its parent resolved, its last component as it is, since nothing is ever
 * mounted on a link itself. Undefined when the parent does not exist.
 */
export async function canonicalPath(path: string): Promise<string | undefined> {
  try {
    const parent = await realpath(dirname(path));
    const name = basename(path);
    if (name === '' || path === '/') return '/';
    return parent === '/' ? `/${name}` : `${parent}/${name}`;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR')
      return undefined;
    throw err;
  }
}

/** A folder as the mount table names what is inside it: every link resolved, the folder's own included. */
export async function canonicalFolder(dir: string): Promise<string | undefined> {
  try {
    return await realpath(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR')
      return canonicalPath(dir);
    throw err;
  }
}

const isBelow = (dir: string, point: string) => point.startsWith(dir === '/' ? '/' : `${dir}/`) && point !== dir;

/** Entries mounted exactly at `dir` (already canonical), topmost last. */
export function entriesAt(table: readonly MountEntry[], dir: string): MountEntry[] {
  return table.filter((m) => m.mountPoint === dir);
}

/** Entries strictly below `dir` (already canonical): the folder itself does not count. */
export function entriesBelow(table: readonly MountEntry[], dir: string): MountEntry[] {
  return table.filter((m) => isBelow(dir, m.mountPoint));
}

/** Entries at `dir` (already canonical) or below it: the folder itself counts. */
export function entriesAtOrBelow(table: readonly MountEntry[], dir: string): MountEntry[] {
  return table.filter((m) => m.mountPoint === dir || isBelow(dir, m.mountPoint));
}

/** What is mounted at `path`, topmost last. */
export async function mountsAt(path: string): Promise<MountEntry[]> {
  const where = await canonicalPath(path);
  return where === undefined ? [] : entriesAt(await readMountTable(), where);
}

/** Mounts strictly below `dir`; a mount at `dir` itself is not counted. */
export async function mountsBelow(dir: string): Promise<MountEntry[]> {
  const where = await canonicalFolder(dir);
  return where === undefined ? [] : entriesBelow(await readMountTable(), where);
}

/** Mounts at `dir` or below it: a mount at `dir` itself is counted. */
export async function mountsAtOrBelow(dir: string): Promise<MountEntry[]> {
  const where = await canonicalFolder(dir);
  return where === undefined ? [] : entriesAtOrBelow(await readMountTable(), where);
}

/** Deepest first, so nested mounts come off before the mounts they sit on. */
export function deepestFirst<T extends { mountPoint: string }>(entries: readonly T[]): T[] {
  return [...entries].sort(
    (a, b) =>
      b.mountPoint.split('/').length - a.mountPoint.split('/').length || b.mountPoint.localeCompare(a.mountPoint),
  );
}
