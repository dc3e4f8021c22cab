import { PluginError } from '@dhv/sdk/client';
import type { VolumeSpec } from '../../volume-specs/volume-spec.js';
import type { ClientCreateRequest, VolumeRecord } from '../state/client-state.js';
import { AgentError } from '../../errors/agent-error.js';
import { serversPluginId, type ClientRegisterRequest } from '../client/plugin-requests.js';
import type { ServerVolume } from '../client/host-volume-manager.js';

/**
 * What the servers keep of a volume they send to the client (Nomad's HostVolume as
 * host_volume_endpoint.go writes it): the spec's namespace, pool, capabilities and
 * constraints; an update keeps its create time. The capacity is the client's answer.
 */
export function serverVolume(spec: VolumeSpec, nodePool: string, existing: VolumeRecord | undefined): ServerVolume {
  const now = new Date().toISOString();
  return {
    Namespace: spec.namespace,
    NodePool: nodePool,
    CapacityBytes: 0n,
    RequestedCapabilities: spec.capabilities.map((c) => ({
      AccessMode: c.accessMode,
      AttachmentMode: c.attachmentMode,
    })),
    Constraints: spec.constraints.map((c) => ({ LTarget: c.attribute, RTarget: c.value, Operand: c.operator })),
    CreateTime: existing?.Volume.CreateTime ?? now,
    ModifyTime: now,
  };
}

/**
 * What the servers keep of a registered volume (Nomad's CanonicalizeForRegister): a
 * register over an existing volume that names no plugin keeps the volume's plugin, so
 * its delete still runs that plugin, which removes what its create made (the client's
 * record of a registered volume has no plugin, and a restore only checks the path).
 */
export function registeredServerVolume(
  spec: VolumeSpec,
  nodePool: string,
  existing: VolumeRecord | undefined,
): ServerVolume {
  const pluginId = spec.pluginId || (existing ? serversPluginId(existing) : '');
  const server = serverVolume(spec, nodePool, existing);
  return pluginId === '' ? server : { ...server, PluginID: pluginId };
}

/** Nomad's ClientHostVolumeCreateRequest for a placed volume. */
export function clientCreateRequest(spec: VolumeSpec, id: string, nodeId: string): ClientCreateRequest {
  return {
    ID: id,
    Name: spec.name,
    PluginID: spec.pluginId,
    Namespace: spec.namespace,
    NodeID: nodeId,
    RequestedCapacityMinBytes: spec.capacityMinBytes,
    RequestedCapacityMaxBytes: spec.capacityMaxBytes,
    Parameters: spec.parameters,
  };
}

/** Nomad's ClientHostVolumeRegisterRequest; a register names its node, and this simulated node is the only one. */
export function clientRegisterRequest(spec: VolumeSpec, id: string, nodeId: string): ClientRegisterRequest {
  if (spec.nodeId !== '' && spec.nodeId !== nodeId) {
    throw new AgentError(
      'SPEC_INVALID',
      `validating volume "${id}" against state failed: node "${spec.nodeId}" does not exist\nThis simulated node is ${nodeId}; leave node_id out.`,
      { nodeId: spec.nodeId },
    );
  }
  return {
    ID: id,
    Name: spec.name,
    NodeID: nodeId,
    HostPath: spec.hostPath,
    CapacityBytes: spec.capacityBytes,
    Parameters: spec.parameters,
  };
}

/**
 * A plugin's failure as Nomad's servers return the client's error: behind the name of the RPC
 * (`HostVolume.Create error: error creating volume ...`), dhv's hints still on the lines below.
 */
export function asServersReturn(rpc: 'HostVolume.Create' | 'HostVolume.Delete', err: unknown): unknown {
  if (!(err instanceof PluginError)) return err;
  const wrapped = new PluginError(err.code, err.reason, {
    pluginId: err.pluginId,
    executable: err.executable,
    operation: err.operation,
    volumeId: err.volumeId,
    exitCode: err.exitCode,
    signal: err.signal,
    durationMs: err.durationMs,
    stdout: err.stdout,
    stderr: err.stderr,
    pluginMessage: err.pluginMessage,
    truncated: err.truncated,
    runError: err.runError,
    nomadPanic: err.nomadPanic,
    nomadMessage: `${rpc} error: ${err.nomadMessage}`,
    hints: err.hints,
  });
  wrapped.stack = err.stack;
  return wrapped;
}
