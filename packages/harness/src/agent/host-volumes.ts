import type { StaticHostVolume } from '../config/agent-config.js';

/** Nomad's ClientHostVolumeConfig as the node reports it in `HostVolumes`. */
export interface HostVolumeConfig {
  ID: string;
  Path: string;
  ReadOnly: boolean;
}

export interface DynamicHostVolume {
  id: string;
  name: string;
  path: string;
}

/**
 * The node's `HostVolumes` map, keyed by name: static volumes from the agent config
 * with an empty ID, dynamic ones with theirs. A dynamic volume whose name matches a
 * static one replaces it, and the replacement is reported as a warning.
 */
export function buildHostVolumes(
  staticVolumes: readonly StaticHostVolume[],
  dynamicVolumes: readonly DynamicHostVolume[],
): { hostVolumes: Record<string, HostVolumeConfig>; warnings: string[] } {
  const map = new Map<string, HostVolumeConfig>();
  const warnings: string[] = [];
  for (const v of staticVolumes) map.set(v.name, { ID: '', Path: v.path, ReadOnly: v.readOnly });
  for (const v of dynamicVolumes) {
    const replaced = map.get(v.name);
    if (replaced && replaced.ID === '') {
      warnings.push(
        `dynamic host volume "${v.name}" (${v.id}) replaces the static host volume of the same name at ${replaced.Path}; rename one of them so jobs get the volume they expect`,
      );
    }
    map.set(v.name, { ID: v.id, Path: v.path, ReadOnly: false });
  }
  const hostVolumes: Record<string, HostVolumeConfig> = {};
  for (const name of [...map.keys()].sort()) hostVolumes[name] = map.get(name)!;
  return { hostVolumes, warnings };
}
