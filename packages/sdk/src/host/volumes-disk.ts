import { createHash } from 'node:crypto';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { ENV } from '../protocol/variables.js';
import { readMountTable, type MountEntry } from './mount-table.js';
import { formatDeviceNumber } from '../helpers/device-number.js';
import { PluginFailure } from '../helpers/errors.js';
import { mkdir, readdir, readFile, realpath, rmdir, stat, unlink } from '../helpers/fs-calls.js';
import { partialFileWriter, replaceFile } from '../helpers/replace-file.js';
import { processExists } from '../helpers/signals.js';

/**
 * The disk a plugin's volumes were created on, kept outside the volumes dir (which goes
 * away with its disk), so a create can tell an unmounted disk from an empty volumes dir.
 * A plugin cannot tell a restore from a first create; it compares the volumes dir's
 * filesystem now with what it recorded at earlier creates there, and refuses to make
 * anything on another one. One record per volume, in a folder per volumes dir:
 * `<plugin state dir>/volumes-dirs/<sha256 of the volumes dir's real path>/<id>.json`.
 */
export interface VolumesDisk {
  /** The volumes dir's real path (its missing tail as given, when the folder is not there). */
  VolumesDir: string;
  /** `major:minor` of the filesystem holding the volumes dir (or its nearest existing parent). */
  Device: string;
  /** Where that filesystem is mounted; the volumes dir itself when it is a mount point. */
  MountPoint: string;
  /** What is mounted there (`/dev/sdb1`, `/dev/loop3`) and its type, for the message. */
  MountSource: string;
  FsType: string;
  /** The image behind MountSource when that is a loop device. */
  MountImage?: string;
  /**
   * When the root of that filesystem, as seen at MountPoint, was made (ns since the epoch;
   * "0" where the filesystem keeps no birth time): tells two filesystems apart that got
   * one device number in turn (tmpfs, a disk swapped in the same slot), and one
   * filesystem from itself under a new device number.
   */
  RootBirth: string;
  /**
   * When the volumes dir itself was made ("0" when unknown): the same device and this
   * birth time now is the same folder on the same filesystem, which a restore can tell
   * from one stat, without reading the mount table.
   */
  DirBirth: string;
}

/** What a create found: the disk now, and whether this volume has a record already. */
export interface VolumesDiskCheck {
  volumeId: string;
  /** The volumes dir's real path: the key of its records. */
  volumesDir: string;
  recorded: boolean;
  folder: string;
}

/**
 * The variable that moves every plugin's state dir (`<it>/<plugin>`), for an author's tests
 * (in-process `invoke` reads this process's environment) and for `dhv check`. Outside the
 * DHV_ prefix: a Nomad agent sends only DHV_* variables, so in production it is never set.
 */
export const STATE_DIR_VARIABLE = 'DHVSDK_STATE_DIR';

/**
 * Where a plugin keeps what must outlive its volumes dir: `/var/lib/<plugin>` as root,
 * else `~/.local/state/<plugin>` (the home dir comes from the user database when HOME is
 * unset), or `<DHVSDK_STATE_DIR>/<plugin>` when that variable holds an absolute path.
 */
export function pluginStateDir(pluginName: string): string {
  const moved = process.env[STATE_DIR_VARIABLE];
  if (moved !== undefined && isAbsolute(moved)) return join(moved, pluginName);
  return process.getuid?.() === 0 ? join('/var/lib', pluginName) : join(homedir(), '.local/state', pluginName);
}

/** The folder of the records of one volumes dir (given by its real path). */
export function volumesDiskFolder(pluginName: string, canonicalVolumesDir: string): string {
  const key = createHash('sha256').update(canonicalVolumesDir).digest('hex');
  return join(pluginStateDir(pluginName), 'volumes-dirs', key);
}

/**
 * Throws EWRONGDISK when the volumes dir is now on another filesystem than the one an
 * earlier create of this plugin found there (this volume's own record, else any other:
 * they agree, since none is written on a disk that disagrees). Call before anything is
 * made, the volumes dir included; hand the result to `keepVolumesDisk` once the create
 * succeeded.
 */
export async function expectVolumesDisk(
  pluginName: string,
  volumesDir: string,
  volumeId: string,
): Promise<VolumesDiskCheck> {
  const canonical = await canonicalDir(volumesDir);
  const folder = volumesDiskFolder(pluginName, canonical);
  const own = await readRecord(join(folder, `${volumeId}.json`));
  const then = own ?? (await anyRecord(folder));
  if (then && !(await sameFolder(then, canonical))) {
    const now = await diskOf(canonical);
    if (!sameDisk(then, now)) throw wrongDisk(then, now, folder);
  }
  return { volumeId, volumesDir: canonical, recorded: own !== undefined, folder };
}

/**
 * Records the disk of a volume just created (or restored without a record). Best effort:
 * a state dir that cannot be written costs only this check, and says so in the log.
 */
export async function keepVolumesDisk(check: VolumesDiskCheck, log: (message: string) => void): Promise<void> {
  if (check.recorded) return;
  const file = join(check.folder, `${check.volumeId}.json`);
  // Taken after the create, which may have made the volumes dir.
  const text = `${JSON.stringify(await diskOf(check.volumesDir))}\n`;
  for (let attempt = 0; ; attempt++) {
    try {
      // A delete of the folder's last volume may remove the folder in between: make it again.
      await mkdir(check.folder, { recursive: true, mode: 0o700 });
      await replaceFile(file, text);
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT' && attempt < 3) continue;
      log(
        `could not record the disk of ${check.volumesDir} in ${file} (${(err as Error).message}); ` +
          `a restore of volume ${check.volumeId} onto another disk will not be caught`,
      );
      return;
    }
  }
}

/** Removes a deleted volume's record, and its volumes dir's folder once that is empty. */
export async function forgetVolumesDisk(pluginName: string, volumesDir: string, volumeId: string): Promise<void> {
  const folder = volumesDiskFolder(pluginName, await canonicalDir(volumesDir));
  await unlink(join(folder, `${volumeId}.json`)).catch(() => {});
  // A create killed while it wrote its record leaves the record's temporary file: with its
  // writer gone it holds nothing, and it would keep the folder for ever.
  for (const name of await readdir(folder).catch(() => [] as string[])) {
    const writer = partialFileWriter(name);
    if (writer !== undefined && !processExists(writer)) await unlink(join(folder, name)).catch(() => {});
  }
  await rmdir(folder).catch(() => {}); // kept while other volumes (or a create) still use it
}

/** The record folders of the volumes dirs at or below `dir` (real paths), with each one's volumes dir, for tidying up after tests. */
export async function volumesDiskFoldersBelow(
  pluginName: string,
  dir: string,
): Promise<Array<{ folder: string; volumesDir: string }>> {
  const root = join(pluginStateDir(pluginName), 'volumes-dirs');
  const found: Array<{ folder: string; volumesDir: string }> = [];
  for (const key of await readdir(root).catch(() => [] as string[])) {
    const volumesDir = (await anyRecord(join(root, key)))?.VolumesDir;
    if (volumesDir === undefined) continue;
    if (dir === '/' || volumesDir === dir || volumesDir.startsWith(`${dir}/`))
      found.push({ folder: join(root, key), volumesDir });
  }
  return found;
}

const knownBirth = (birth: string | undefined): birth is string => birth !== undefined && birth !== '0' && birth !== '';

async function sameFolder(then: VolumesDisk, canonical: string): Promise<boolean> {
  if (!knownBirth(then.DirBirth)) return false;
  const info = await stat(canonical, { bigint: true }).catch(() => undefined);
  return (
    info !== undefined &&
    formatDeviceNumber(Number(info.dev)) === then.Device &&
    info.birthtimeNs.toString() === then.DirBirth
  );
}

function sameDisk(then: VolumesDisk, now: VolumesDisk): boolean {
  if (then.MountPoint !== now.MountPoint) return false;
  if (knownBirth(then.RootBirth) && knownBirth(now.RootBirth)) return then.RootBirth === now.RootBirth;
  return then.Device === now.Device;
}

function wrongDisk(then: VolumesDisk, now: VolumesDisk, folder: string): PluginFailure {
  return new PluginFailure(
    'EWRONGDISK',
    `volumes dir ${now.VolumesDir} (${ENV.volumesDir}) is not on the disk its volumes were created on: ` +
      `then it was on ${describe(then)}, now it is on ${describe(now)}. That disk is missing (not mounted, or another one is mounted there), ` +
      `so nothing was created on the wrong filesystem. Mount ${sourceOf(then)} at ${then.MountPoint} again, then run the create again ` +
      `(dhv agent restart, or a restart of the Nomad agent, does it for every volume); if it is that disk under a new device number, ` +
      `remove ${folder} to accept it as it is now`,
    { volumesDir: now.VolumesDir, recorded: then, now },
  );
}

const describe = (d: VolumesDisk) =>
  `the ${d.FsType} filesystem of ${sourceOf(d)} (device ${d.Device}${madeAt(d)}) mounted at ${d.MountPoint}`;

const madeAt = (d: VolumesDisk) =>
  d.RootBirth && d.RootBirth !== '0'
    ? `, made ${new Date(Number(BigInt(d.RootBirth) / 1_000_000n)).toISOString()}`
    : '';

const sourceOf = (d: VolumesDisk) => (d.MountImage ? `${d.MountSource} (image ${d.MountImage})` : d.MountSource);

/** The filesystem holding the volumes dir (a real path), or its nearest existing parent when it is not there. */
async function diskOf(canonical: string): Promise<VolumesDisk> {
  const own = await stat(canonical, { bigint: true }).catch(() => undefined);
  let found = own;
  for (let probe = canonical; found === undefined && probe !== '/';) {
    probe = dirname(probe);
    found = await stat(probe, { bigint: true }).catch(() => undefined);
  }
  const device = found === undefined ? undefined : Number(found.dev);
  const dirBirth = own?.birthtimeNs.toString() ?? '0';
  const mount = holdingMount(await readMountTable(), canonical);
  const source = mount?.source ?? '';
  const image = await loopImage(source);
  const root = mount?.mountPoint ?? '/';
  const birth = await stat(root, { bigint: true }).then(
    (s) => s.birthtimeNs.toString(),
    () => '0',
  );
  return {
    VolumesDir: canonical,
    Device: device === undefined ? '' : formatDeviceNumber(device),
    MountPoint: root,
    MountSource: source,
    FsType: mount?.fsType ?? '',
    ...(image ? { MountImage: image } : {}),
    RootBirth: birth,
    DirBirth: dirBirth,
  };
}

async function loopImage(source: string): Promise<string | undefined> {
  const loop = /^\/dev\/(loop[0-9]+)$/.exec(source)?.[1];
  if (!loop) return undefined;
  const text = await readFile(`/sys/block/${loop}/loop/backing_file`, 'utf8').catch(() => '');
  return text.trim() || undefined;
}

/** The mount `path` is on: the deepest mount point at or above it, the topmost of those. */
function holdingMount(table: readonly MountEntry[], path: string): MountEntry | undefined {
  let best: MountEntry | undefined;
  for (const m of table) {
    const holds = m.mountPoint === '/' || path === m.mountPoint || path.startsWith(`${m.mountPoint}/`);
    if (holds && (best === undefined || m.mountPoint.length >= best.mountPoint.length)) best = m;
  }
  return best;
}

/** Every link resolved; a missing tail is kept as given, below its nearest existing parent. */
async function canonicalDir(dir: string): Promise<string> {
  try {
    return await realpath(dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const parent = dirname(dir);
    if ((code !== 'ENOENT' && code !== 'ENOTDIR') || parent === dir) return dir;
    const above = await canonicalDir(parent);
    return join(above, basename(dir));
  }
}

async function readRecord(file: string): Promise<VolumesDisk | undefined> {
  try {
    const parsed = JSON.parse(await readFile(file, 'utf8')) as Partial<VolumesDisk>;
    return typeof parsed.Device === 'string' && typeof parsed.MountPoint === 'string'
      ? (parsed as VolumesDisk)
      : undefined;
  } catch {
    return undefined;
  }
}

async function anyRecord(folder: string): Promise<VolumesDisk | undefined> {
  for (const name of await readdir(folder).catch(() => [] as string[])) {
    if (!name.endsWith('.json')) continue;
    const record = await readRecord(join(folder, name));
    if (record) return record;
  }
  return undefined;
}
