import { randomUUID } from 'node:crypto';
import { AgentError } from '../errors/agent-error.js';
import { multierrorText } from '../go/multierror.js';
import type { VolumeSpec } from '../volume-specs/volume-spec.js';
import type { AgentParts } from './agent-parts.js';
import { describeNode } from './node-description.js';
import { stateAfterClientAnswered, withoutDeleted } from './node-report.js';
import {
  asServersReturn,
  clientCreateRequest,
  clientRegisterRequest,
  registeredServerVolume,
  serverVolume,
} from './servers/host-volume-endpoint.js';
import { placementProblem } from './servers/placement.js';
import { existingForUpdate } from './servers/update-rules.js';
import type { VolumeRecord } from './state/client-state.js';
import type { HostVolume } from './volume-view.js';

/** `volume create` and `volume register`, as the Agent's operations: the servers' rules, then the client's call, then the state the servers compute. */

export interface Upserted {
  volume: HostVolume;
  /** False when the spec updated a volume that was there. */
  created: boolean;
}

/**
 * `volume create` end to end: the servers' checks (update rules, placement on this
 * node: the plugin must be fingerprinted and the constraints met), then the client's
 * create, then the state the servers compute. All of it holds the volume's lock (Nomad's
 * serializeCall), and the volume is read under it: an update that comes after a delete
 * finds no volume, and one that comes before it finishes before the delete begins.
 */
export async function createVolume(agent: AgentParts, spec: VolumeSpec): Promise<Upserted> {
  const facts = await agent.facts();
  // Looked up before the locks, not under them: the runner makes the plugin's pipes while this
  // process waits for its locks (ProcessRunner.lookup), instead of after.
  const pluginInDir = agent.runner.lookup(agent.config.pluginDir, spec.pluginId).then(
    () => true,
    () => false,
  );
  return holdingVolumeOf(agent, spec, 'creating', async (id) => {
    const existing = await updateRules(agent, spec);
    const problem = placementProblem(spec, {
      nodeId: agent.nodeId,
      nodePool: agent.config.nodePool,
      description: describeNode(agent.config),
      facts: await withoutDeleted(agent, facts, [spec.name]),
      pluginDir: agent.config.pluginDir,
      pluginInDir: await pluginInDir,
      updating: existing !== undefined,
    });
    if (problem) throw problem;
    await agent
      .manager()
      .create(clientCreateRequest(spec, id, agent.nodeId), serverVolume(spec, agent.config.nodePool, existing))
      .catch((err: unknown) => {
        throw asServersReturn('HostVolume.Create', err);
      });
    return { volume: await stateAfterClientAnswered(agent, id), created: !existing };
  });
}

/** `volume register`: the servers' update rules, then the client's register (the path must exist; no plugin runs). */
export async function registerVolume(agent: AgentParts, spec: VolumeSpec): Promise<Upserted> {
  await agent.facts();
  return holdingVolumeOf(agent, spec, 'registering', async (id) => {
    const existing = await updateRules(agent, spec);
    await agent
      .manager()
      .register(
        clientRegisterRequest(spec, id, agent.nodeId),
        registeredServerVolume(spec, agent.config.nodePool, existing),
      );
    return { volume: await stateAfterClientAnswered(agent, id), created: !existing };
  });
}

/** Runs `fn` with the spec's volume ID (a new one when it names none), holding that volume's lock (Nomad's serializeCall). */
function holdingVolumeOf<T>(
  agent: AgentParts,
  spec: VolumeSpec,
  doing: 'creating' | 'registering',
  fn: (id: string) => Promise<T>,
): Promise<T> {
  const id = spec.id || randomUUID();
  const what = { doing: `${doing} volume "${spec.name}" (${id})`, name: spec.name };
  return agent.store.lock.volume(id, what, () => fn(id), agent.signal);
}

/** The servers' rules before either: the namespace exists, and the volume the spec updates (if any) may change. */
async function updateRules(agent: AgentParts, spec: VolumeSpec): Promise<VolumeRecord | undefined> {
  await agent.namespaces().requireForVolume(spec.namespace);
  const existing = existingForUpdate(spec, spec.id ? await agent.state.get(spec.id) : undefined);
  if (existing) await refuseUpdateInUse(agent, existing);
  return existing;
}

/** Nomad's ValidateUpdate: no change at all while allocations use the volume. */
async function refuseUpdateInUse(agent: AgentParts, record: VolumeRecord): Promise<void> {
  const users = await agent.volumeUsers({ Name: record.CreateReq.Name, NodeID: record.CreateReq.NodeID });
  if (users.length > 0)
    throw new AgentError(
      'VOLUME_IN_USE',
      `validating volume "${record.ID}" update failed: ${multierrorText([`cannot update a volume in use: claimed by allocs (${users.map((a) => a.ID).join(', ')})`])}`,
      { volumeId: record.ID, allocations: users.map((a) => a.ID) },
    );
}
