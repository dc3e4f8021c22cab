import type { StaticHostVolume } from '../config/agent-config.js';

/** Nomad's ClientHostVolumeConfig as the node reports it in `HostVolumes`. */
export interface HostVolumeConfig {
  Name: string;
  Path: string;
  ReadOnly: boolean;
  /** Empty for a static volume from the agent config. */
  ID: string;
}

export type HostVolumeMap = Record<string, HostVolumeConfig>;

/** One change the host volume manager hands the node: a volume under a name, or `null` to drop the name. */
export interface HostVolumeUpdate {
  name: string;
  volume: HostVolumeConfig | null;
}

/** The node's map at agent start, before restore: the static volumes of the agent config. */
export function staticHostVolumes(staticVolumes: readonly StaticHostVolume[]): HostVolumeMap {
  const map: HostVolumeMap = {};
  for (const v of staticVolumes) map[v.name] = { Name: v.name, Path: v.path, ReadOnly: v.readOnly, ID: '' };
  return map;
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
  const next = new Map(Object.entries(map));
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
  const hostVolumes: HostVolumeMap = {};
  for (const name of [...next.keys()].sort()) hostVolumes[name] = next.get(name)!;
  return { hostVolumes, warnings };
}
