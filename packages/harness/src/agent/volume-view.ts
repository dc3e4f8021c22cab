import type { VolumeRecord } from './state/client-state.js';
import { serversPluginId } from './client/plugin-requests.js';
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
  /** Omitted when there are none, as Nomad's API omits it. */
  Constraints?: VolumeRecord['Volume']['Constraints'];
  /** Omitted when there are none, as Nomad's API omits it. */
  Parameters?: Record<string, string>;
  HostPath: string;
  State: VolumeState;
  /** Why the last restore left the volume out. */
  StateError?: string;
  /** Unix nanoseconds, as Nomad's int64 times (client state keeps RFC 3339 text). */
  CreateTime: bigint;
  ModifyTime: bigint;
}

/** What Nomad's list API returns for each volume (api.HostVolumeStub): the summary, no request or path. */
export interface HostVolumeStub {
  Namespace: string;
  ID: string;
  Name: string;
  PluginID: string;
  NodePool: string;
  NodeID: string;
  CapacityBytes: bigint;
  State: VolumeState;
  CreateTime: bigint;
  ModifyTime: bigint;
  /** dhv's: why the volume is unavailable, as in the full volume. */
  StateError?: string;
}

export function volumeStub(v: HostVolume): HostVolumeStub {
  return {
    Namespace: v.Namespace,
    ID: v.ID,
    Name: v.Name,
    PluginID: v.PluginID,
    NodePool: v.NodePool,
    NodeID: v.NodeID,
    CapacityBytes: v.CapacityBytes,
    State: v.State,
    CreateTime: v.CreateTime,
    ModifyTime: v.ModifyTime,
    ...(v.StateError !== undefined ? { StateError: v.StateError } : {}),
  };
}

/** The last time converted: volumes made together share their times, and a restore converts thousands. */
let lastTime: { text: string; nanos: bigint } | undefined;

/** RFC 3339 text to Unix nanoseconds (0 for an empty or unreadable time, as Go's zero time would not be). */
function unixNanos(time: string): bigint {
  if (lastTime?.text === time) return lastTime.nanos;
  const ms = Date.parse(time);
  const nanos = Number.isNaN(ms) ? 0n : BigInt(ms) * 1_000_000n;
  lastTime = { text: time, nanos };
  return nanos;
}

/** The one mapping from a client state record (and what the servers computed) to the volume users see. */
/**
 * The volume as Go's struct holds it, for `-t` templates: the fields the API's JSON omits when
 * empty are still there, nil, so `{{if .Parameters}}` is false rather than an error.
 */
export function asGoStruct(v: HostVolume): object {
  return { Allocations: null, ...v, Constraints: v.Constraints ?? null, Parameters: v.Parameters ?? null };
}

export function toHostVolume(record: VolumeRecord, state: VolumeState, failure?: VolumeFailure): HostVolume {
  const req = record.CreateReq;
  return {
    ID: record.ID,
    Name: req.Name,
    Namespace: record.Volume.Namespace ?? req.Namespace,
    PluginID: serversPluginId(record),
    NodeID: req.NodeID,
    NodePool: record.Volume.NodePool,
    CapacityBytes: record.Volume.CapacityBytes,
    RequestedCapacityMinBytes: req.RequestedCapacityMinBytes,
    RequestedCapacityMaxBytes: req.RequestedCapacityMaxBytes,
    RequestedCapabilities: record.Volume.RequestedCapabilities,
    ...(record.Volume.Constraints.length > 0 ? { Constraints: record.Volume.Constraints } : {}),
    ...(req.Parameters && Object.keys(req.Parameters).length > 0 ? { Parameters: req.Parameters } : {}),
    HostPath: record.HostPath,
    // A volume dhv knows is broken (failed restore, path gone, delete cut short) is never ready.
    State: failure ? 'unavailable' : state,
    ...(failure ? { StateError: failure.error } : {}),
    CreateTime: unixNanos(record.Volume.CreateTime),
    ModifyTime: unixNanos(record.Volume.ModifyTime),
  };
}
