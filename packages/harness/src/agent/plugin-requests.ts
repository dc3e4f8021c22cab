import type { CreateRequest, DeleteRequest } from '@dhv/sdk';
import type { AgentConfig } from '../config/agent-config.js';
import type { VolumeRecord } from './client-state.js';

/**
 * The requests the agent gives a plugin for a volume it has in client state: create
 * again with the saved request (restore), and delete with the path create returned.
 */
export function createRequestFor(record: VolumeRecord, config: AgentConfig): CreateRequest {
  const req = record.CreateReq;
  return {
    ...commonFields(record, config),
    capacityMinBytes: req.RequestedCapacityMinBytes,
    capacityMaxBytes: req.RequestedCapacityMaxBytes,
  };
}

export function deleteRequestFor(record: VolumeRecord, config: AgentConfig): DeleteRequest {
  return { ...commonFields(record, config), createdPath: record.HostPath };
}

function commonFields(record: VolumeRecord, config: AgentConfig) {
  const req = record.CreateReq;
  return {
    volumesDir: config.volumesDir,
    pluginDir: config.pluginDir,
    namespace: req.Namespace,
    volumeName: req.Name,
    volumeId: req.ID,
    nodeId: req.NodeID,
    nodePool: config.nodePool,
    parameters: req.Parameters,
  };
}
