import type { CreateRequest, FingerprintRequest } from '../protocol/request.js';
import type { RequestInput } from './environment.js';

/**
 * What the agent sends a plugin for each call (PROTOCOL.md, "What the agent does with
 * volumes"), the one model of it: the agent builds its calls here, and the conformance
 * checks and the explorer send what it sends from here. Every builder keeps the shape it
 * is given: a full request (what the agent has) or a `RequestInput` (what a check makes up,
 * the rest defaulted by `buildEnvironment` as the agent defaults it).
 */

/** What the agent says of itself on every volume call: its client config. */
export type AgentFields = Pick<CreateRequest, 'volumesDir' | 'pluginDir' | 'nodePool'>;

/** The volume a call is about, as the servers named it to the client. */
export type VolumeFields = Pick<CreateRequest, 'namespace' | 'volumeName' | 'volumeId' | 'nodeId' | 'parameters'>;

/** The capacities a create asks for (a delete sends none). */
export type CapacityFields = Pick<CreateRequest, 'capacityMinBytes' | 'capacityMaxBytes'>;

type Capacity = keyof CapacityFields;

/** A volume call's fields but the capacities: what a create and a delete of the same volume share. */
type VolumeCall = Omit<RequestInput<'create'>, Capacity>;

/** The delete built from `V`: its fields but the capacities, and the path it names. */
export type DeleteFor<V extends VolumeCall> = Omit<V, Capacity> & { createdPath: string };

/** The fingerprint: only DHV_OPERATION, nothing about a volume or the agent. */
export function fingerprintRequest(): FingerprintRequest {
  return {};
}

/** A create: the agent's own settings, then the volume and the capacities the servers sent. */
export function createRequest(agent: AgentFields, volume: VolumeFields & CapacityFields): CreateRequest {
  return {
    volumesDir: agent.volumesDir,
    pluginDir: agent.pluginDir,
    nodePool: agent.nodePool,
    namespace: volume.namespace,
    volumeName: volume.volumeName,
    volumeId: volume.volumeId,
    nodeId: volume.nodeId,
    capacityMinBytes: volume.capacityMinBytes,
    capacityMaxBytes: volume.capacityMaxBytes,
    parameters: volume.parameters,
  };
}

/**
 * A restore: at every start the agent sends each volume's saved create request again,
 * unchanged (Nomad's client keeps it in client state); the plugin must answer with the
 * volume it made, its data untouched.
 */
export function restoreRequest<C extends RequestInput<'create'>>(saved: C): C {
  return { ...saved };
}

/**
 * A delete: the volume as its create named it (the same agent, name, namespace, ID, node
 * and parameters; no capacities), and `DHV_CREATED_PATH`, the path the servers recorded
 * from the volume's first create ('' when none answered).
 */
export function deleteRequest<V extends VolumeCall>(volume: V, createdPath: string): DeleteFor<V> {
  const { capacityMinBytes: _min, capacityMaxBytes: _max, ...fields } = volume as V & Partial<CapacityFields>;
  return { ...fields, createdPath } as DeleteFor<V>;
}

/**
 * The cleanup delete, after an initial create whose state write failed, exactly as Nomad
 * sends it (PROTOCOL.md, "The cleanup delete"): `DHV_CREATED_PATH` is the volumes dir
 * itself, the name and namespace are empty; the ID, node, pool and parameters are the create's.
 */
export function cleanupDeleteRequest<V extends VolumeCall>(
  volume: V,
): DeleteFor<V> & { volumeName: ''; namespace: '' } {
  return { ...deleteRequest(volume, volume.volumesDir), volumeName: '', namespace: '' };
}
