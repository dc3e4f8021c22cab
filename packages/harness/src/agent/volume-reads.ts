import { AgentError } from '../errors/agent-error.js';
import type { AgentParts } from './agent-parts.js';
import { published, volumeState } from './node-report.js';
import { nodeStatus, type NodeStatus } from './node-status.js';
import { toHostVolume, type HostVolume } from './volume-view.js';

/** What `volume status` and `node status` read, as the Agent's operations. */

type ReadParts = Pick<AgentParts, 'config' | 'nodeId' | 'store' | 'state' | 'facts' | 'warn'>;

/** The volume of ID `id` (a whole ID, as Nomad's API reads it). */
export async function readVolume(agent: ReadParts, id: string): Promise<HostVolume> {
  const record = await agent.state.get(id);
  if (!record)
    throw new AgentError('VOLUME_NOT_FOUND', `no such volume: ${id}\nRun dhv volume status to list the volumes.`, {
      ref: id,
    });
  return toHostVolume(
    record,
    await volumeState(agent, record.ID),
    (await agent.store.health.judge([record])).get(record.ID),
  );
}

/** Every volume whose record loads; each one that does not is a warning naming its file and the fix. */
export async function readVolumes(agent: ReadParts): Promise<HostVolume[]> {
  const [{ records, damaged }, facts] = await Promise.all([agent.state.scan(), agent.store.nodeFacts()]);
  for (const d of damaged) agent.warn(d.error.message);
  const failures = await agent.store.health.judge(records);
  return records.map((r) => toHostVolume(r, facts?.volumeStates.get(r.ID) ?? 'pending', failures.get(r.ID)));
}

/** The error of the one volume whose ID starts with `ref` and whose record does not load, if there is one. */
export async function unreadableVolume(agent: ReadParts, ref: string): Promise<AgentError | undefined> {
  if (ref === '') return undefined;
  const matches = (await agent.state.scan()).damaged.filter((d) => d.id.startsWith(ref));
  return matches.length === 1 ? matches[0]!.error : undefined;
}

/** The node as the servers see it: attributes from the last fingerprint, `HostVolumes` as the node last reported them. */
export async function readNodeStatus(agent: ReadParts): Promise<NodeStatus> {
  const facts = await agent.facts();
  const volumes = await readVolumes(agent);
  const recorded = new Set(volumes.map((v) => v.ID));
  return nodeStatus(
    agent.config,
    agent.nodeId,
    published(facts, (id) => recorded.has(id)),
    volumes,
  );
}
