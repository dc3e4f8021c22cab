import type { VolumeRecord } from './state/client-state.js';
import type { VolumeState } from './state/node-facts.js';
import type { VolumeFailure } from './state/volume-health.js';

export type { VolumeState };

/** A volume as `nomad volume status` shows it: Nomad's HostVolume field names, plus the state and why. */
export interface HostVolume {
  ID: string;
  Name: string;
  Namespace: string;
  PluginID: string;
  NodeID: string;
  NodePool: string;
  CapacityBytes: bigint;
  RequestedCapacityMinBytes: bigint;
  RequestedCapacityMaxBytes: bigint;
  RequestedCapabilities: VolumeRecord['Volume']['RequestedCapabilities'];
  Constraints: VolumeRecord['Volume']['Constraints'];
  Parameters: Record<string, string> | null;
  HostPath: string;
  State: VolumeState;
  /** Why the last restore left the volume out. */
  StateError?: string;
  CreateTime: string;
  ModifyTime: string;
}

/** The one mapping from a client state record (and what the servers computed) to the volume users see. */
export function toHostVolume(record: VolumeRecord, state: VolumeState, failure?: VolumeFailure): HostVolume {
  const req = record.CreateReq;
  return {
    ID: record.ID,
    Name: req.Name,
    Namespace: record.Volume.Namespace ?? req.Namespace,
    PluginID: req.PluginID,
    NodeID: req.NodeID,
    NodePool: record.Volume.NodePool,
    CapacityBytes: record.Volume.CapacityBytes,
    RequestedCapacityMinBytes: req.RequestedCapacityMinBytes,
    RequestedCapacityMaxBytes: req.RequestedCapacityMaxBytes,
    RequestedCapabilities: record.Volume.RequestedCapabilities,
    Constraints: record.Volume.Constraints,
    Parameters: req.Parameters,
    HostPath: record.HostPath,
    // A volume dhv knows is broken (failed restore, path gone, delete cut short) is never ready.
    State: failure ? 'unavailable' : state,
    ...(failure ? { StateError: failure.error } : {}),
    CreateTime: record.Volume.CreateTime,
    ModifyTime: record.Volume.ModifyTime,
  };
}
