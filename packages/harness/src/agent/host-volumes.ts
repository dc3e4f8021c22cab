import type { StaticHostVolume } from '../config/agent-config.js';

/** Nomad's ClientHostVolumeConfig as the node reports it in `HostVolumes`. */
export interface HostVolumeConfig {
  Name: string;
  Path: string;
  ReadOnly: boolean;
  /** Empty for a static volume from the agent config. */
  ID: string;
}

/**
 * The node's `HostVolumes` by name. A Map, not an object: a node of 10,000 volumes keeps
 * one key per volume, and an object of that many keys is several times slower to build,
 * copy and walk. `hostVolumesObject` gives the map as Nomad's JSON shows it.
 */
export type HostVolumeMap = ReadonlyMap<string, HostVolumeConfig>;

/** One change the host volume manager hands the node: a volume under a name, or `null` to drop the name. */
export interface HostVolumeUpdate {
  name: string;
  volume: HostVolumeConfig | null;
}

/** The node's map at agent start, before restore: the static volumes of the agent config. */
export function staticHostVolumes(staticVolumes: readonly StaticHostVolume[]): HostVolumeMap {
  return new Map(staticVolumes.map((v) => [v.name, { Name: v.name, Path: v.path, ReadOnly: v.readOnly, ID: '' }]));
}

/** The map as the node's JSON shows it: an object, its names in order (Go writes a map's keys sorted). */
export function hostVolumesObject(map: HostVolumeMap): Record<string, HostVolumeConfig> {
  // Defined, not assigned: a volume named `__proto__` is a key like any other.
  return Object.fromEntries([...map.keys()].sort().map((name) => [name, map.get(name)!]));
}

/**
 * Applies updates as Nomad's node updater does: a volume replaces whatever the name held
 * (a static volume included, with a warning), and `null` removes the name, so deleting a
 * dynamic volume that shadowed a static one leaves neither until the agent restarts.
 */
export function applyHostVolumeUpdates(
  map: HostVolumeMap,
  updates: readonly HostVolumeUpdate[],
): { hostVolumes: HostVolumeMap; warnings: string[] } {
  const next = new Map(map);
  const warnings: string[] = [];
  for (const { name, volume } of updates) {
    if (volume === null) {
      next.delete(name);
      continue;
    }
    const replaced = next.get(name);
    if (replaced && replaced.ID === '') {
      warnings.push(
        `overriding static host volume with dynamic: name=${name} id=${volume.ID}\n` +
          `The static host volume "${name}" at ${replaced.Path} is hidden while the dynamic one exists, and deleting the dynamic one removes the name ` +
          `from the node until the agent restarts. Rename one of them so jobs get the volume they expect.`,
      );
    }
    next.set(name, volume);
  }
  return { hostVolumes: next, warnings };
}
