import { readdirSync } from 'node:fs';
import { mkdir, readFile, realpath, stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join } from 'node:path';
import {
  atOrBelow,
  attachedLoopDevices,
  canonicalPath,
  describeMount,
  entriesAt,
  formatDeviceNumber,
  PARTIAL_PREFIX,
  readMountTable,
  sameFilesystem,
  type LoopDevice,
  type MountEntry,
  type MountIdentity,
} from '@dhv/sdk/host';
import type { VolumeRecord } from './client-state.js';
import { stateLayout } from './layout.js';
import { stampOf, type StateIndex } from './state-index.js';
import {
  readRegularFile,
  readSmallRegularFileSync,
  removeFileDurably,
  syncFileSystemOf,
  writeFileAtomically,
  writeFileDurably,
} from './durable-file.js';

/** Why a volume is not usable, shaped as VolumeHealth keeps a failure. */
interface Unusable {
  code: string;
  error: string;
  at: string;
}

/**
 * The disk each volume was created on, kept in the data dir (never in the volumes dir,
 * which goes away with the disk it is on): the filesystem that held the volumes dir (its
 * device, and where it was mounted) and whether the volume's path was a mount point of its
 * own (a loop-mounted volume). The built-in mkdir's restore compares the volumes dir's
 * filesystem now with it, to say on its line that the folder was made on another one
 * (external plugins keep their own record and refuse; see @dhv/sdk's volumes-disk);
 * `volume status` compares the volume's mount with it, so a volume whose mount or image
 * is gone never says ready.
 */
export interface VolumeDisk {
  VolumesDir: string;
  /** `major:minor` of the filesystem holding the volumes dir. */
  Device: string;
  /** Where that filesystem is mounted: the volumes dir itself when it is a mount point. */
  DiskMountPoint: string;
  /** The volume's path was itself a mount point when it was created. */
  VolumeMounted: boolean;
}

export class VolumeDisks {
  private readonly dir: string;

  constructor(
    dataDir: string,
    private readonly index?: StateIndex,
  ) {
    this.dir = stateLayout(dataDir).volumeDisks;
  }

  /** Keeps where volume `id` was created, the first time only: a restore on another disk never overwrites it. */
  async recordIfNew(id: string, volumesDir: string, hostPath: string): Promise<void> {
    if (await this.get(id)) return;
    this.index?.forget('disks');
    const disk = await diskOf(volumesDir);
    if (!disk) return;
    // A relative path names no folder of its own (Nomad's client never resolves it): never a mount point.
    const mounted =
      isAbsolute(hostPath) && (await canonicalPath(hostPath).then((p) => (p ? mountedAt(p) : []))).length > 0;
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    await writeFileDurably(this.file(id), JSON.stringify({ VolumesDir: volumesDir, ...disk, VolumeMounted: mounted }));
  }

  async get(id: string): Promise<VolumeDisk | undefined> {
    try {
      return JSON.parse(await readRegularFile(this.file(id))) as VolumeDisk;
    } catch {
      return undefined;
    }
  }

  async forget(id: string): Promise<void> {
    this.index?.forget('disks');
    await removeFileDurably(this.file(id));
  }

  /**
   * Volumes whose mount is gone or was replaced by another filesystem at the same place
   * (compared with `recordedMounts`, the mounts its plugin made), or whose loop device's
   * image was deleted or cut short: not usable, whatever the last restore said.
   */
  async unusable(
    records: readonly VolumeRecord[],
    recordedMounts: ReadonlyMap<string, MountIdentity[]> = new Map(),
  ): Promise<Map<string, Unusable>> {
    const out = new Map<string, Unusable>();
    const mountedOnes: Array<{ record: VolumeRecord; mounts: MountIdentity[] }> = [];
    for (const record of records) {
      if (!isAbsolute(record.HostPath)) continue;
      const mounts = recordedMounts.get(record.ID) ?? [];
      if (mounts.length > 0 || (await this.get(record.ID))?.VolumeMounted) mountedOnes.push({ record, mounts });
    }
    if (mountedOnes.length === 0) return out;
    const [table, loops] = await Promise.all([readMountTable(), attachedLoopDevices()]);
    for (const { record, mounts } of mountedOnes) {
      const problem =
        (await replacedMount(record.HostPath, mounts, table)) ?? (await mountProblem(record.HostPath, table, loops));
      if (problem) out.set(record.ID, { ...problem, at: '' });
    }
    return out;
  }

  /**
   * The disk records as one restore uses them: every record read once, the volumes dir's
   * filesystem looked up once, and the records of volumes met for the first time written
   * together by `finish()` (one mount table read, one `sync -f`), not one durable file each.
   */
  async forRestore(volumesDir: string): Promise<RestoreDisks> {
    const now = await diskOf(volumesDir);
    const indexed = this.index?.section('disks', this.dir);
    const known = indexed ? reviveDisks(indexed) : undefined;
    if (known) return new RestoreDisks(this.dir, volumesDir, known, now, this.index);
    const read = new Map<string, VolumeDisk>();
    const stamp = stampOf(this.dir);
    let names: string[] = [];
    try {
      names = readdirSync(this.dir);
    } catch {
      // No record yet: every volume is met for the first time.
    }
    for (const name of names) {
      if (!name.endsWith('.json') || name.startsWith(PARTIAL_PREFIX)) continue;
      try {
        read.set(
          name.slice(0, -'.json'.length),
          JSON.parse(readSmallRegularFileSync(join(this.dir, name))) as VolumeDisk,
        );
      } catch {
        // A record that does not load is no record, as get() reads it: it is written again below.
      }
    }
    // A file that did not load is no record here but is still a file: the folder is noted only when every one loaded.
    if (read.size === names.filter((n) => n.endsWith('.json') && !n.startsWith(PARTIAL_PREFIX)).length)
      this.index?.note('disks', stamp, () => indexedDisks(read));
    else this.index?.forget('disks');
    return new RestoreDisks(this.dir, volumesDir, read, now, this.index);
  }

  private file(id: string): string {
    return join(this.dir, `${id}.json`);
  }
}

/** One restore's view of the disk records (VolumeDisks.forRestore). */
export class RestoreDisks {
  private readonly met = new Map<string, string>();

  constructor(
    private readonly dir: string,
    private readonly volumesDir: string,
    private readonly known: ReadonlyMap<string, VolumeDisk>,
    private readonly now: Pick<VolumeDisk, 'Device' | 'DiskMountPoint'> | undefined,
    private readonly index?: StateIndex,
  ) {}

  /** Said on the restore line of a volume the built-in mkdir made again, as Nomad's does, on another filesystem. */
  movedNote(record: VolumeRecord): string | undefined {
    const then = this.known.get(record.ID);
    if (!then || !this.now || sameDisk(then, this.now)) return undefined;
    return (
      `its folder now lives on another filesystem than at create (made again there, as Nomad's built-in mkdir does; ` +
      `what was written on the first disk is not in it): ${onAnotherDisk(then, this.now, this.volumesDir)}`
    );
  }

  /** Notes that volume `id` was restored at `hostPath`; a volume without a record gets one at `finish()`. */
  restored(id: string, hostPath: string): void {
    if (!this.known.has(id)) this.met.set(id, hostPath);
  }

  /**
   * Writes the records of the volumes met for the first time, then one `sync -f`. Best
   * effort, as a create's record: a crash before it loses only those volumes' wrong-disk
   * check until the next restore records them.
   */
  async finish(): Promise<void> {
    if (this.met.size === 0 || !this.now) return;
    this.index?.forget('disks');
    const written = new Map(this.known);
    const table = await readMountTable();
    // Each volume's canonicalPath, its parent resolved once for all the volumes in it.
    const parents = new Map<string, Promise<string | undefined>>();
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    for (const [id, hostPath] of this.met) {
      if (!isAbsolute(hostPath)) {
        const disk: VolumeDisk = { VolumesDir: this.volumesDir, ...this.now, VolumeMounted: false };
        await writeFileAtomically(join(this.dir, `${id}.json`), JSON.stringify(disk));
        written.set(id, disk);
        continue;
      }
      const parent = dirname(hostPath);
      if (!parents.has(parent))
        parents.set(
          parent,
          realpath(parent).catch(() => undefined),
        );
      const canonicalParent = await parents.get(parent)!;
      const name = basename(hostPath);
      const where =
        canonicalParent === undefined || name === ''
          ? await canonicalPath(hostPath).catch(() => undefined)
          : join(canonicalParent, name);
      const mounted = where !== undefined && entriesAt(table, where).length > 0;
      const disk: VolumeDisk = { VolumesDir: this.volumesDir, ...this.now, VolumeMounted: mounted };
      await writeFileAtomically(join(this.dir, `${id}.json`), JSON.stringify(disk));
      written.set(id, disk);
    }
    await syncFileSystemOf(this.dir);
    const stamp = stampOf(this.dir);
    this.index?.note('disks', stamp, () => indexedDisks(written));
  }
}

/**
 * The disk records as the state index keeps them: each distinct record once, with the IDs
 * of the volumes that have it (volumes made on one disk share one).
 */
function indexedDisks(disks: ReadonlyMap<string, VolumeDisk>): unknown[] {
  const groups = new Map<string, { Disk: VolumeDisk; IDs: string[] }>();
  for (const [id, disk] of disks) {
    const key = JSON.stringify(disk);
    const group = groups.get(key);
    if (group) group.IDs.push(id);
    else groups.set(key, { Disk: disk, IDs: [id] });
  }
  return [...groups.values()];
}

/** The disk records of the index, or undefined when they are not shaped as `indexedDisks` wrote them. */
function reviveDisks(items: unknown[]): Map<string, VolumeDisk> | undefined {
  const out = new Map<string, VolumeDisk>();
  for (const item of items) {
    const { Disk: disk, IDs: ids } = (item ?? {}) as { Disk?: VolumeDisk; IDs?: unknown };
    if (typeof disk !== 'object' || disk === null || typeof disk.Device !== 'string' || !Array.isArray(ids))
      return undefined;
    for (const id of ids) {
      if (typeof id !== 'string') return undefined;
      out.set(id, disk);
    }
  }
  return out;
}

const sameDisk = (a: Pick<VolumeDisk, 'Device' | 'DiskMountPoint'>, b: Pick<VolumeDisk, 'Device' | 'DiskMountPoint'>) =>
  a.Device === b.Device && a.DiskMountPoint === b.DiskMountPoint;

function onAnotherDisk(then: VolumeDisk, now: Omit<VolumeDisk, 'VolumesDir' | 'VolumeMounted'>, volumesDir: string) {
  return (
    `the volumes dir ${volumesDir} was on the filesystem mounted at ${then.DiskMountPoint} (device ${then.Device}) when the volume was created, ` +
    `and is now on the one mounted at ${now.DiskMountPoint} (device ${now.Device}): that disk is missing`
  );
}

/** The filesystem holding `volumesDir`: its device and where it is mounted. */
async function diskOf(volumesDir: string): Promise<Pick<VolumeDisk, 'Device' | 'DiskMountPoint'> | undefined> {
  const canonical = await realpath(volumesDir).catch(() => undefined);
  if (canonical === undefined) return undefined;
  const device = formatDeviceNumber((await stat(canonical)).dev);
  let mountPoint = '/';
  for (const m of await readMountTable())
    if (atOrBelow(m.mountPoint, canonical) && m.mountPoint.length >= mountPoint.length) mountPoint = m.mountPoint;
  return { Device: device, DiskMountPoint: mountPoint };
}

async function mountedAt(canonical: string): Promise<MountEntry[]> {
  return entriesAt(await readMountTable(), canonical);
}

/**
 * A recorded mount whose place now holds another filesystem (another device, or a root
 * born at another time), or nothing: the path is then not the volume. The same filesystem
 * mounted again is still the volume.
 */
export async function replacedMount(
  hostPath: string,
  mounts: readonly MountIdentity[],
  table: readonly MountEntry[],
): Promise<{ code: 'VOLUME_NOT_MOUNTED' | 'MOUNT_REPLACED'; error: string } | undefined> {
  for (const recorded of mounts) {
    const top = entriesAt(table, recorded.mountPoint).at(-1);
    if (!top) {
      return {
        code: 'VOLUME_NOT_MOUNTED',
        error: `the volume's filesystem (${describeMount(recorded)}) is no longer mounted at ${recorded.mountPoint}: files written to ${hostPath} now land on the filesystem below and are hidden by the next mount; run dhv agent restart to mount it again`,
      };
    }
    if (!(await sameFilesystem(top, recorded))) {
      return {
        code: 'MOUNT_REPLACED',
        error: `${recorded.mountPoint} holds ${describeMount(top)}, not the volume's filesystem ${describeMount(recorded)} that its plugin mounted there: files written to ${hostPath} do not land on the volume; unmount it (umount ${recorded.mountPoint}), then run dhv agent restart`,
      };
    }
  }
  return undefined;
}

async function mountProblem(
  hostPath: string,
  table: readonly MountEntry[],
  loops: readonly LoopDevice[],
): Promise<Omit<Unusable, 'at'> | undefined> {
  const where = await canonicalPath(hostPath);
  const top = where === undefined ? undefined : entriesAt(table, where).at(-1);
  if (!top) {
    return {
      code: 'VOLUME_NOT_MOUNTED',
      error: `the volume's filesystem is no longer mounted at ${hostPath} (it was at create): files written there now land on the filesystem below and are hidden by the next mount; run dhv agent restart to mount it again`,
    };
  }
  const loop = loops.find((l) => l.device === top.source);
  if (!loop) return undefined;
  if (loop.deleted) {
    return {
      code: 'IMAGE_DELETED',
      error: `the image ${loop.backingFile} of ${loop.device}, mounted at ${hostPath}, was deleted: the volume lives only until it is unmounted; copy its files away, then delete the volume`,
    };
  }
  const [imageBytes, deviceBytes] = await Promise.all([
    stat(loop.backingFile)
      .then((s) => s.size)
      .catch(() => undefined),
    readFile(`/sys/block/${loop.device.slice('/dev/'.length)}/size`, 'utf8')
      .then((t) => Number(t.trim()) * 512)
      .catch(() => undefined),
  ]);
  if (imageBytes !== undefined && deviceBytes !== undefined && imageBytes < deviceBytes) {
    return {
      code: 'IMAGE_TRUNCATED',
      error: `the image ${loop.backingFile} of ${loop.device}, mounted at ${hostPath}, is ${imageBytes} bytes, shorter than the ${deviceBytes} bytes of its filesystem: reads past its end fail with I/O errors; copy what still reads away, then delete the volume`,
    };
  }
  return undefined;
}
