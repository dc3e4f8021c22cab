import type { HostVolume } from './volume-view.js';

/** Nomad's `-namespace *`: every namespace. */
export const ALL_NAMESPACES = '*';

export type VolumeLookup = { found: HostVolume } | { ambiguous: HostVolume[] } | { none: true };

/**
 * How Nomad's CLI finds the volume a user named (getHostVolumeByPrefix over the servers'
 * List with a prefix): every volume of the namespace (`*`: all) whose ID or name starts
 * with `ref`; one match is it; several are narrowed to the one whose ID or name is
 * exactly `ref`, and are ambiguous otherwise.
 */
export function lookupVolume(volumes: readonly HostVolume[], ref: string, namespace: string): VolumeLookup {
  const matches = volumes
    .filter((v) => namespace === ALL_NAMESPACES || v.Namespace === namespace)
    .filter((v) => v.ID.startsWith(ref) || v.Name.startsWith(ref))
    .sort((a, b) => (a.ID < b.ID ? -1 : a.ID > b.ID ? 1 : 0));
  if (matches.length === 0) return { none: true };
  if (matches.length === 1) return { found: matches[0]! };
  const exact = matches.filter((v) => v.ID === ref || v.Name === ref);
  return exact.length === 1 ? { found: exact[0]! } : { ambiguous: matches };
}
