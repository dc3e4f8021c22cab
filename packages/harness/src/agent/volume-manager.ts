import { randomUUID } from 'node:crypto';
import { stat } from 'node:fs/promises';
import type { CreateRequest } from '@dhv/sdk';
import type { AgentConfig } from '../config/agent-config.js';
import type { VolumeSpec } from '../spec/volume-spec.js';
import { ClientState, isRegistered, type VolumeRecord } from './client-state.js';
import { AgentError } from './errors.js';
import { NameClaims } from './name-claims.js';
import { lookupPlugin } from './plugins.js';
import { deleteRequestFor } from './plugin-requests.js';
import { VolumeHealth } from './volume-health.js';

export interface VolumeManagerContext {
  config: AgentConfig;
  nodeId: string;
  state: ClientState;
  names: NameClaims;
  health: VolumeHealth;
  /** Aborted when the agent shuts down: every plugin run in flight is killed. */
  signal: AbortSignal;
  warn: (message: string) => void;
}

export interface VolumeChange {
  record: VolumeRecord;
  /** False when an existing volume was updated. */
  created: boolean;
}

/**
 * Create, register and delete with the agent's rules (PROTOCOL.md, "What the agent
 * does with volumes"): a per-name lock, state written after a successful create,
 * delete after a failed state write on an initial create, and no plugin for
 * registered volumes.
 */
export class VolumeManager {
  constructor(private readonly ctx: VolumeManagerContext) {}

  async create(spec: VolumeSpec): Promise<VolumeChange> {
    const { config, nodeId, state, names, health, signal } = this.ctx;
    checkPlacement(spec, config, nodeId);
    const id = spec.id || randomUUID();
    return names.withLock(spec.name, async () => {
      const existing = spec.id ? await this.existingForUpdate(spec) : undefined;
      await this.claimName(spec.name, id);
      const request = createRequest(spec, id, config, nodeId);
      const plugin = await lookupPlugin(config.pluginDir, spec.pluginId).catch(async (err: unknown) => {
        if (!existing) await names.release(spec.name, id);
        throw err;
      });
      let result: { path: string; bytes: bigint };
      try {
        result = await plugin.create(request, signal);
      } catch (err) {
        if (!existing) await names.release(spec.name, id);
        throw err;
      }
      const now = new Date().toISOString();
      const record = toRecord(spec, id, nodeId, config.nodePool, result.path, result.bytes, existing?.Volume.CreateTime ?? now, now);
      try {
        await state.put(record);
      } catch (err) {
        if (!existing) {
          // The agent's rule: an initial create that cannot be saved is undone, so nothing is left unrecorded.
          await plugin.delete({ ...request, createdPath: result.path }, signal).catch((deleteErr: unknown) => {
            this.ctx.warn(`could not delete volume ${id} after failing to save it: ${(deleteErr as Error).message}`);
          });
          await names.release(spec.name, id);
        }
        throw err;
      }
      await health.clear(id);
      return { record, created: !existing };
    }, signal);
  }

  async register(spec: VolumeSpec): Promise<VolumeChange> {
    const { config, nodeId, state, names, health, signal } = this.ctx;
    checkPlacement(spec, config, nodeId);
    await checkHostPath(spec.hostPath);
    const id = spec.id || randomUUID();
    return names.withLock(spec.name, async () => {
      const existing = spec.id ? await state.get(id) : undefined;
      if (existing && !isRegistered(existing)) {
        throw new AgentError('VOLUME_UPDATE_REFUSED', `volume ${id} was created by plugin "${existing.CreateReq.PluginID}"; update it with volume create, not volume register`, { volumeId: id });
      }
      await this.claimName(spec.name, id);
      const now = new Date().toISOString();
      const record = toRecord({ ...spec, pluginId: '' }, id, nodeId, config.nodePool, spec.hostPath, spec.capacityBytes, existing?.Volume.CreateTime ?? now, now);
      try {
        await state.put(record);
      } catch (err) {
        if (!existing) await names.release(spec.name, id);
        throw err;
      }
      await health.clear(id);
      return { record, created: !existing };
    }, signal);
  }

  async delete(record: VolumeRecord): Promise<void> {
    const { config, state, names, health, signal } = this.ctx;
    const req = record.CreateReq;
    await names.withLock(req.Name, async () => {
      if (!isRegistered(record)) {
        const plugin = await lookupPlugin(config.pluginDir, req.PluginID);
        await health.whileDeleting(record.ID, () => plugin.delete(deleteRequestFor(record, config), signal));
      }
      await state.remove(record.ID);
      await names.release(req.Name, record.ID);
      await health.clear(record.ID);
    }, signal);
  }

  /** A second volume may not take a name held by a volume that still exists (call with the name's lock held). */
  private async claimName(name: string, id: string): Promise<void> {
    const holder = await this.ctx.names.holder(name);
    if (holder && holder !== id) {
      const held = await this.ctx.state.get(holder);
      if (held && held.CreateReq.Name === name) {
        throw new AgentError(
          'VOLUME_NAME_EXISTS',
          `volume name already exists on this node: "${name}" belongs to volume ${holder}; choose another name, or set id = "${holder}" to update that volume`,
          { name, volumeId: holder },
        );
      }
    }
    if (holder !== id) await this.ctx.names.claim(name, id);
  }

  /** The checks Nomad makes before it updates a volume (validating volume update). */
  private async existingForUpdate(spec: VolumeSpec): Promise<VolumeRecord> {
    const existing = await this.ctx.state.get(spec.id);
    if (!existing) {
      throw new AgentError('VOLUME_NOT_FOUND', `cannot update volume "${spec.id}": volume does not exist; leave id out of the spec to create a new volume`, { volumeId: spec.id });
    }
    const problems: string[] = [];
    if (isRegistered(existing)) problems.push(`it was registered, not created; update it with volume register`);
    if (spec.nodeId !== '' && spec.nodeId !== existing.CreateReq.NodeID) problems.push(`node ID cannot be updated (it is ${existing.CreateReq.NodeID})`);
    if (spec.nodePool !== '' && spec.nodePool !== existing.Volume.NodePool) problems.push(`node pool cannot be updated (it is ${existing.Volume.NodePool})`);
    if (spec.capacityMaxBytes !== 0n && spec.capacityMaxBytes < existing.Volume.CapacityBytes) {
      problems.push(`capacity_max (${spec.capacityMaxBytes}) cannot be less than the existing provisioned capacity (${existing.Volume.CapacityBytes})`);
    }
    // Stricter than Nomad, which would strand the old name's lock or the old plugin's volume.
    if (spec.name !== existing.CreateReq.Name) problems.push(`name cannot be updated (it is "${existing.CreateReq.Name}")`);
    if (!isRegistered(existing) && spec.pluginId !== existing.CreateReq.PluginID) {
      problems.push(`plugin ID cannot be updated (it is "${existing.CreateReq.PluginID}")`);
    }
    if (problems.length > 0) {
      throw new AgentError('VOLUME_UPDATE_REFUSED', `validating volume "${spec.id}" update failed: ${problems.join('; ')}`, { volumeId: spec.id, problems });
    }
    return existing;
  }
}

/** The simulated cluster has one node: a spec may only name this node and its pool. */
function checkPlacement(spec: VolumeSpec, config: AgentConfig, nodeId: string): void {
  const problems: string[] = [];
  if (spec.nodeId !== '' && spec.nodeId !== nodeId) problems.push(`node_id: no such node ${spec.nodeId} (this node is ${nodeId}); leave node_id out`);
  if (spec.nodePool !== '' && spec.nodePool !== config.nodePool) {
    problems.push(`node_pool: no node in pool "${spec.nodePool}" (this node is in "${config.nodePool}"); leave node_pool out or use --node-pool`);
  }
  if (problems.length > 0) throw new AgentError('SPEC_INVALID', `cannot place the volume:\n  * ${problems.join('\n  * ')}`, { problems });
}

async function checkHostPath(hostPath: string): Promise<void> {
  try {
    await stat(hostPath);
  } catch (err) {
    throw new AgentError('HOST_PATH_MISSING', `host_path ${hostPath} does not exist on this node (${(err as NodeJS.ErrnoException).code}); create it first, or use volume create`, {
      hostPath,
    });
  }
}

function createRequest(spec: VolumeSpec, id: string, config: AgentConfig, nodeId: string): CreateRequest {
  return {
    volumesDir: config.volumesDir,
    pluginDir: config.pluginDir,
    namespace: spec.namespace,
    volumeName: spec.name,
    volumeId: id,
    nodeId,
    nodePool: config.nodePool,
    capacityMinBytes: spec.capacityMinBytes,
    capacityMaxBytes: spec.capacityMaxBytes,
    parameters: spec.parameters,
  };
}

function toRecord(
  spec: VolumeSpec,
  id: string,
  nodeId: string,
  nodePool: string,
  hostPath: string,
  capacityBytes: bigint,
  createTime: string,
  modifyTime: string,
): VolumeRecord {
  return {
    ID: id,
    HostPath: hostPath,
    CreateReq: {
      ID: id,
      Name: spec.name,
      PluginID: spec.pluginId,
      Namespace: spec.namespace,
      NodeID: nodeId,
      RequestedCapacityMinBytes: spec.capacityMinBytes,
      RequestedCapacityMaxBytes: spec.capacityMaxBytes,
      Parameters: spec.parameters,
    },
    Volume: {
      NodePool: nodePool,
      CapacityBytes: capacityBytes,
      RequestedCapabilities: spec.capabilities.map((c) => ({ AccessMode: c.accessMode, AttachmentMode: c.attachmentMode })),
      Constraints: spec.constraints.map((c) => ({ LTarget: c.attribute, RTarget: c.value, Operand: c.operator })),
      CreateTime: createTime,
      ModifyTime: modifyTime,
    },
  };
}
