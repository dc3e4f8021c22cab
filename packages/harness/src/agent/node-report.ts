import { applyHostVolumeUpdates, type HostVolumeConfig, type HostVolumeUpdate } from './host-volumes.js';
import { unstartedNodeFacts } from './node-status.js';
import { serverKey } from './agent-start.js';
import { stateAfterUpsert, statesAfterNodeUpdate } from './servers/volume-states.js';
import type { NodeFacts, VolumeState } from './state/node-facts.js';
import { toHostVolume, type HostVolume } from './volume-view.js';
import type { AgentParts } from './agent-parts.js';

/** What the node reports (its `HostVolumes`) and the volume states the servers compute from it, kept in the store's node facts. */

type ReportParts = Pick<AgentParts, 'config' | 'store' | 'state' | 'warn'>;

/** The node tells the servers about changed volumes; they recompute every volume's state on this node. */
export async function publish(agent: ReportParts, updates: HostVolumeUpdate[]): Promise<void> {
  const records = await agent.state.list();
  let warnings: string[] = [];
  await agent.store.updateNodeFacts((f) => {
    const facts = f ?? unstartedNodeFacts(agent.config);
    const applied = applyHostVolumeUpdates(facts.hostVolumes, updates);
    warnings = applied.warnings;
    return {
      ...facts,
      hostVolumes: applied.hostVolumes,
      volumeStates: statesAfterNodeUpdate(facts.volumeStates, records.map(serverKey), applied.hostVolumes),
    };
  });
  for (const w of warnings) agent.warn(w);
}

/** The servers write the volume after the client answered: `pending`, or `ready` when the node already reports its name. */
export async function stateAfterClientAnswered(agent: ReportParts, id: string): Promise<HostVolume> {
  const record = (await agent.state.get(id))!;
  // The node's update during the client's create usually wrote this very state: no second write.
  const now = await agent.store.nodeFacts();
  const known = now?.volumeStates.get(id);
  if (now && known === stateAfterUpsert(record.CreateReq.Name, now.hostVolumes)) return toHostVolume(record, known);
  const facts = await agent.store.updateNodeFacts((f) => {
    const facts = f ?? unstartedNodeFacts(agent.config);
    return {
      ...facts,
      volumeStates: new Map(facts.volumeStates).set(id, stateAfterUpsert(record.CreateReq.Name, facts.hostVolumes)),
    };
  });
  return toHostVolume(record, facts.volumeStates.get(id) ?? 'pending');
}

/** The servers forget a deleted volume's state. */
export async function forgetVolumeState(agent: ReportParts, id: string): Promise<void> {
  await agent.store.updateNodeFacts((f) => {
    const facts = f ?? unstartedNodeFacts(agent.config);
    const volumeStates = new Map(facts.volumeStates);
    volumeStates.delete(id);
    return { ...facts, volumeStates };
  });
}

export async function volumeState(agent: Pick<AgentParts, 'store'>, id: string): Promise<VolumeState> {
  return (await agent.store.nodeFacts())?.volumeStates.get(id) ?? 'pending';
}

/**
 * The node's facts without a dynamic volume whose record is gone. Every change of a
 * volume commits with one rename or unlink of its record; a `dhv` killed between a
 * delete's commit and its update of the node left the volume on the node, and what the
 * node reports is read against client state, so the next command sees it deleted.
 * `names` limits the look to the entries a caller reads.
 */
export async function withoutDeleted(
  agent: Pick<AgentParts, 'state'>,
  facts: NodeFacts,
  names: readonly string[],
): Promise<NodeFacts> {
  const gone = new Set<string>();
  for (const name of names) {
    const id = facts.hostVolumes.get(name)?.ID;
    if (id && !(await agent.state.has(id))) gone.add(id);
  }
  return published(facts, (id) => !gone.has(id));
}

/** The node's facts with only the dynamic volumes `recorded` still knows. */
export function published(facts: NodeFacts, recorded: (id: string) => boolean): NodeFacts {
  let hostVolumes: Map<string, HostVolumeConfig> | undefined;
  for (const [name, volume] of facts.hostVolumes) {
    if (volume.ID === '' || recorded(volume.ID)) continue;
    (hostVolumes ??= new Map(facts.hostVolumes)).delete(name);
  }
  return hostVolumes ? { ...facts, hostVolumes } : facts;
}
