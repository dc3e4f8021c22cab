import type { CreateRequest, DeleteRequest } from '@dhv/sdk';
import { createRequest, deleteRequest, type AgentFields, type VolumeFields } from '@dhv/sdk/client';
import type { AgentConfig } from '../../config/agent-config.js';
import type { ClientCreateRequest, VolumeRecord } from '../state/client-state.js';

/** Nomad's ClientHostVolumeRegisterRequest: what the servers send to register an existing path. */
export interface ClientRegisterRequest {
  ID: string;
  Name: string;
  NodeID: string;
  HostPath: string;
  CapacityBytes: bigint;
  Parameters: Record<string, string> | null;
}

/** Nomad's ClientHostVolumeDeleteRequest; `PluginID` is empty for a registered volume, `HostPath` is what the servers recorded. */
export interface ClientDeleteRequest {
  ID: string;
  Name: string;
  PluginID: string;
  Namespace: string;
  NodeID: string;
  HostPath: string;
  Parameters: Record<string, string> | null;
}

type AgentSettings = Pick<AgentConfig, 'volumesDir' | 'pluginDir' | 'nodePool'>;

/** The volume as Nomad's client request names it, in the protocol's fields. */
function volumeFields(req: ClientCreateRequest | ClientDeleteRequest): VolumeFields {
  return {
    namespace: req.Namespace,
    volumeName: req.Name,
    volumeId: req.ID,
    nodeId: req.NodeID,
    parameters: req.Parameters,
  };
}

const agentFields = ({ volumesDir, pluginDir, nodePool }: AgentSettings): AgentFields => ({
  volumesDir,
  pluginDir,
  nodePool,
});

/** The plugin's create request for a client create request (a create, an update, or restore's saved one). */
export function pluginCreateRequest(req: ClientCreateRequest, config: AgentSettings): CreateRequest {
  return createRequest(agentFields(config), {
    ...volumeFields(req),
    capacityMinBytes: req.RequestedCapacityMinBytes,
    capacityMaxBytes: req.RequestedCapacityMaxBytes,
  });
}

/** The plugin's delete request: `DHV_CREATED_PATH` is the path the servers recorded (the first create's). */
export function pluginDeleteRequest(req: ClientDeleteRequest, config: AgentSettings): DeleteRequest {
  return deleteRequest({ ...agentFields(config), ...volumeFields(req) }, req.HostPath);
}

/** What the servers send to delete a volume they have: the record's request and its first path. */
export function deleteRequestFor(record: VolumeRecord): ClientDeleteRequest {
  const req = record.CreateReq;
  return {
    ID: record.ID,
    Name: req.Name,
    PluginID: serversPluginId(record),
    // The servers send the volume's namespace; a registered volume's CreateReq has none.
    Namespace: record.Volume.Namespace ?? req.Namespace,
    NodeID: req.NodeID,
    HostPath: record.HostPath,
    Parameters: req.Parameters,
  };
}

/** The plugin the servers know the volume by: the create's, or the one a registered volume names. */
export function serversPluginId(record: VolumeRecord): string {
  return record.CreateReq.PluginID || (record.Volume.PluginID ?? '');
}
