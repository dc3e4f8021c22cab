import type { HostVolumeMap } from '../host-volumes.js';
import type { VolumeState, VolumeStates } from '../state/node-facts.js';

/**
 * Nomad's servers on every node update: a volume whose name the node reports is
 * `ready` (a static volume of that name counts), a `ready` one it no longer reports is
 * `unavailable`, a `pending` one stays pending. A node that reports no host volume at
 * all changes nothing.
 */
export function statesAfterNodeUpdate(
  states: VolumeStates,
  volumes: ReadonlyArray<{ ID: string; Name: string }>,
  hostVolumes: HostVolumeMap,
): VolumeStates {
  if (hostVolumes.size === 0) return states;
  const next = new Map(states);
  for (const v of volumes) {
    const current = next.get(v.ID) ?? 'pending';
    if (hostVolumes.has(v.Name)) next.set(v.ID, 'ready');
    else if (current === 'ready') next.set(v.ID, 'unavailable');
    else next.set(v.ID, current);
  }
  return next;
}

/** The servers write a volume after the client answered: `ready` when the node already reports its name, `pending` otherwise. */
export function stateAfterUpsert(name: string, hostVolumes: HostVolumeMap): VolumeState {
  return hostVolumes.has(name) ? 'ready' : 'pending';
}
