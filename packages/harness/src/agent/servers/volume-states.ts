import type { HostVolumeMap } from '../host-volumes.js';
import type { VolumeState } from '../state/node-facts.js';

/**
 * Nomad's servers on every node update: a volume whose name the node reports is
 * `ready` (a static volume of that name counts), a `ready` one it no longer reports is
 * `unavailable`, a `pending` one stays pending. A node that reports no host volume at
 * all changes nothing.
 */
export function statesAfterNodeUpdate(
  states: Record<string, VolumeState>,
  volumes: ReadonlyArray<{ ID: string; Name: string }>,
  hostVolumes: HostVolumeMap,
): Record<string, VolumeState> {
  if (Object.keys(hostVolumes).length === 0) return states;
  const next = { ...states };
  for (const v of volumes) {
    const current = next[v.ID] ?? 'pending';
    if (v.Name in hostVolumes) next[v.ID] = 'ready';
    else if (current === 'ready') next[v.ID] = 'unavailable';
    else next[v.ID] = current;
  }
  return next;
}

/** The servers write a volume after the client answered: `ready` when the node already reports its name, `pending` otherwise. */
export function stateAfterUpsert(name: string, hostVolumes: HostVolumeMap): VolumeState {
  return name in hostVolumes ? 'ready' : 'pending';
}
