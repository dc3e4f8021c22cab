import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import {
  entriesAt,
  entriesAtOrBelow,
  identityOf,
  PARTIAL_PREFIX,
  readMountTable,
  sameFilesystem,
  type MountEntry,
  type MountIdentity,
} from '@dhv/sdk/host';
import { stateLayout } from './layout.js';
import { readRegularFile, removeFileDurably, writeFileDurably } from './durable-file.js';

/**
 * The mounts each volume's plugin made, by identity (mount ID, device, place): those that
 * appeared at or below the volume's path while its create, or its last restore, ran. The
 * reboot unmounts only these, and `volume status` calls a volume whose recorded mount was
 * replaced by another at the same path unavailable. A mount already there before the
 * plugin ran (another data dir's volume at a path this plugin also answers) is never one.
 * A volume with no file here made no mount.
 */
export class VolumeMounts {
  private readonly dir: string;

  constructor(dataDir: string) {
    this.dir = stateLayout(dataDir).volumeMounts;
  }

  async get(id: string): Promise<MountIdentity[]> {
    try {
      const { Mounts } = JSON.parse(await readRegularFile(this.file(id))) as { Mounts?: MountIdentity[] };
      return Array.isArray(Mounts) ? Mounts : [];
    } catch {
      return [];
    }
  }

  /** Every volume's recorded mounts, the folder read once. */
  async all(): Promise<Map<string, MountIdentity[]>> {
    const out = new Map<string, MountIdentity[]>();
    const names = await readdir(this.dir).catch(() => [] as string[]);
    for (const name of names) {
      if (!name.endsWith('.json') || name.startsWith(PARTIAL_PREFIX)) continue;
      const id = name.slice(0, -'.json'.length);
      const mounts = await this.get(id);
      if (mounts.length > 0) out.set(id, mounts);
    }
    return out;
  }

  /** Keeps `mounts` as volume `id`'s own (none: the file goes). */
  async put(id: string, mounts: readonly MountIdentity[]): Promise<void> {
    if (mounts.length === 0) return this.forget(id);
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    await writeFileDurably(this.file(id), JSON.stringify({ Mounts: mounts }));
  }

  async forget(id: string): Promise<void> {
    await removeFileDurably(this.file(id));
  }

  private file(id: string): string {
    return join(this.dir, `${id}.json`);
  }
}

/**
 * Every mount now, each by its ID, device and place: taken before a plugin runs, so what it
 * mounts can be told from what was there. The kernel gives a freed mount ID (and a tmpfs's
 * device number) to the next mount anywhere, so an ID alone would mistake a plugin's new
 * mount for one another program unmounted meanwhile.
 */
export async function mountsNow(): Promise<Set<string>> {
  return mountsOf(await readMountTable());
}

export const mountsOf = (table: readonly MountEntry[]): Set<string> => new Set(table.map(mountKey));

const mountKey = (m: MountEntry) => `${m.mountId} ${m.device} ${m.fsType} ${m.source} ${m.mountPoint}`;

/** The mounts at or below `path` that are not among `before`: what the plugin that ran since made there. */
export async function mountsMadeSince(
  before: ReadonlySet<string>,
  table: readonly MountEntry[],
  canonical: string | undefined,
): Promise<MountIdentity[]> {
  if (canonical === undefined) return [];
  const made = entriesAtOrBelow(table, canonical).filter((m) => !before.has(mountKey(m)));
  return Promise.all(made.map((m) => identify(table, m)));
}

/**
 * A volume's mounts after its restore: what the restore made, and each recorded mount
 * whose filesystem is still on top at its place (the same mount, or mounted again).
 */
export async function mountsAfterRestore(
  recorded: readonly MountIdentity[],
  made: readonly MountIdentity[],
  table: readonly MountEntry[],
): Promise<MountIdentity[]> {
  const out = [...made];
  for (const r of recorded) {
    const top = entriesAt(table, r.mountPoint).at(-1);
    if (top && !out.some((m) => m.mountId === top.mountId) && (await sameFilesystem(top, r)))
      out.push(await identityOf(top));
  }
  return out;
}

/** A mount's identity; its root's birth time only when it is on top at its place (the path shows the top one). */
async function identify(table: readonly MountEntry[], m: MountEntry): Promise<MountIdentity> {
  const identity = await identityOf(m);
  return entriesAt(table, m.mountPoint).at(-1)?.mountId === m.mountId ? identity : { ...identity, rootBirth: '0' };
}
