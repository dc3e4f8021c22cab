import { lstat } from 'node:fs/promises';
import { join } from 'node:path';
import { cleanupDeleteRequest, valueOf } from '@dhv/sdk/client';
import { canonicalPath, readMountTable } from '@dhv/sdk/host';
import type { ClientCreateRequest, VolumeRecord } from '../state/client-state.js';
import { AgentError } from '../../errors/agent-error.js';
import { goStat } from '../../go/os.js';
import { joinErrors } from '../../go/multierror.js';
import { mountsNow, mountsMadeSince } from '../state/volume-mounts.js';
import {
  pluginCreateRequest,
  pluginDeleteRequest,
  type ClientDeleteRequest,
  type ClientRegisterRequest,
} from './plugin-requests.js';
import { hostVolume, messageOf, type VolumeManagerContext } from './volume-manager-context.js';
import { VolumeRestore, type RestoreOutcome } from './volume-restore.js';

/** Nomad's ClientHostVolumeCreateResponse. */
export interface ClientCreateResponse {
  volumeName: string;
  volumeId: string;
  hostPath: string;
  capacityBytes: bigint;
}

/** The servers' side of a record, kept beside the client's so `volume status` can show it. */
export type ServerVolume = VolumeRecord['Volume'];

/**
 * Nomad's client-side host volume manager (PROTOCOL.md, "What the agent does with
 * volumes"), at the level of the requests the servers send: name claims, plugin runs,
 * client state, the cleanup delete, and what the node is told.
 */
export class VolumeManager {
  constructor(private readonly ctx: VolumeManagerContext) {}

  async create(
    req: ClientCreateRequest,
    server: ServerVolume = defaultServerVolume(this.ctx.config.nodePool),
  ): Promise<ClientCreateResponse> {
    const { config, runner, names, signal } = this.ctx;
    const fields = { volume_id: req.ID, volume_name: req.Name };
    await runner.lookup(config.pluginDir, req.PluginID);
    const oldName = await this.renamedFrom(req);
    return this.ctx.lock.names(
      oldName === undefined ? [req.Name] : [oldName, req.Name],
      { doing: `creating volume "${req.Name}" (${req.ID})`, name: req.Name, volumeId: req.ID },
      async () => {
        const { wasFree } = await this.claim(req.Name, req.ID);
        // What is mounted before the plugin runs is not the volume's, whatever path it answers.
        const mountsBefore = this.ctx.mounts ? await mountsNow() : undefined;
        let result: { path: string; bytes: bigint };
        try {
          result = valueOf(
            await runner.run('create', {
              plugin: { pluginDir: config.pluginDir, pluginId: req.PluginID },
              request: pluginCreateRequest(req, config),
              signal,
            }),
          );
        } catch (err) {
          await names.release(req.Name, req.ID);
          if (!wasFree) {
            this.ctx.log({
              level: 'warn',
              message:
                `the failed update released the name "${req.Name}" of volume ${req.ID}, which is still on the node and in client state: ` +
                `a real Nomad agent does the same (a bug), so another volume may now take the name and the next restart keeps only one of them`,
              fields,
            });
          }
          throw err;
        }
        const record: VolumeRecord = {
          ID: req.ID,
          HostPath: result.path,
          CreateReq: req,
          Volume: { ...server, CapacityBytes: result.bytes },
        };
        if (oldName !== undefined) await names.keep(oldName, req.ID);
        await this.saveCreated(record, wasFree);
        await this.ctx.health?.clear(req.ID);
        // Best effort: without the record, only the wrong-disk check of this volume is lost.
        await this.ctx.disks?.recordIfNew(req.ID, config.volumesDir, result.path).catch(() => {});
        if (mountsBefore)
          await this.ctx.mounts
            ?.put(req.ID, await mountsMadeSince(mountsBefore, await readMountTable(), await canonicalPath(result.path)))
            .catch(() => {});
        await this.ctx.publish([{ name: req.Name, volume: hostVolume(req.Name, req.ID, result.path) }]);
        return { volumeName: req.Name, volumeId: req.ID, hostPath: result.path, capacityBytes: result.bytes };
      },
      signal,
    );
  }

  /**
   * Writes a created volume's record. When that fails on a volume this create made (its
   * name was free), the plugin's cleanup delete undoes it, as Nomad's "initial create
   * detected"; the write's error is thrown either way.
   */
  private async saveCreated(record: VolumeRecord, wasFree: boolean): Promise<void> {
    const { config, runner, state, names, signal } = this.ctx;
    const req = record.CreateReq;
    const fields = { volume_id: req.ID, volume_name: req.Name };
    try {
      await state.put(record);
    } catch (err) {
      this.ctx.log({
        level: 'error',
        message: 'failed to save volume in client state',
        fields: { ...fields, error: messageOf(err) },
      });
      if (!wasFree) throw err;
      this.ctx.log({ level: 'error', message: 'initial create detected, running delete', fields });
      try {
        valueOf(
          await runner.run('delete', {
            plugin: { pluginDir: config.pluginDir, pluginId: req.PluginID },
            request: cleanupDeleteRequest(pluginCreateRequest(req, config)),
            signal,
          }),
        );
      } catch (deleteErr) {
        this.ctx.log({
          level: 'warn',
          message: 'error deleting volume after state store failure',
          fields: { ...fields, error: messageOf(deleteErr) },
        });
        throw joinErrors([err, deleteErr]);
      } finally {
        await names.release(req.Name, req.ID);
      }
      throw err;
    }
  }

  async register(
    req: ClientRegisterRequest,
    server: ServerVolume = defaultServerVolume(this.ctx.config.nodePool),
  ): Promise<void> {
    const { state, names, signal } = this.ctx;
    const fields = { volume_id: req.ID, volume_name: req.Name };
    const oldName = await this.renamedFrom(req);
    await this.ctx.lock.names(
      oldName === undefined ? [req.Name] : [oldName, req.Name],
      { doing: `registering volume "${req.Name}" (${req.ID})`, name: req.Name, volumeId: req.ID },
      async () => {
        await this.claim(req.Name, req.ID);
        try {
          await goStat(req.HostPath);
        } catch (err) {
          await names.release(req.Name, req.ID);
          const error = new AgentError(
            'HOST_PATH_MISSING',
            `could not verify host path for "${req.Name}": ${messageOf(err)}`,
            {
              volumeId: req.ID,
              hostPath: req.HostPath,
            },
          );
          this.ctx.log({
            level: 'error',
            message: 'error registering volume',
            fields: { ...fields, error: error.message },
          });
          throw error;
        }
        const createReq: ClientCreateRequest = {
          ID: req.ID,
          Name: req.Name,
          PluginID: '',
          Namespace: '',
          NodeID: req.NodeID,
          RequestedCapacityMinBytes: 0n,
          RequestedCapacityMaxBytes: 0n,
          Parameters: req.Parameters,
        };
        if (oldName !== undefined) await names.keep(oldName, req.ID);
        try {
          await state.put({
            ID: req.ID,
            HostPath: req.HostPath,
            CreateReq: createReq,
            Volume: { ...server, CapacityBytes: req.CapacityBytes },
          });
        } catch (err) {
          await names.release(req.Name, req.ID);
          throw err;
        }
        await this.ctx.health?.clear(req.ID);
        await this.ctx.publish([{ name: req.Name, volume: hostVolume(req.Name, req.ID, req.HostPath) }]);
      },
      signal,
    );
  }

  async delete(req: ClientDeleteRequest): Promise<{ volumeName: string; volumeId: string }> {
    const { config, runner, state, names, signal } = this.ctx;
    return this.ctx.lock.name(
      req.Name,
      { doing: `deleting volume "${req.Name}" (${req.ID})`, name: req.Name, volumeId: req.ID },
      async () => {
        await this.ctx.beforeDelete?.(req);
        if (req.PluginID !== '') {
          await runner.lookup(config.pluginDir, req.PluginID);
          const run = async () =>
            void valueOf(
              await runner.run('delete', {
                plugin: { pluginDir: config.pluginDir, pluginId: req.PluginID },
                request: pluginDeleteRequest(req, config),
                signal,
              }),
            );
          await (this.ctx.health ? this.ctx.health.whileDeleting(req.ID, run) : run());
        }
        try {
          await state.remove(req.ID);
        } catch (err) {
          this.ctx.log({
            level: 'error',
            message: 'failed to delete volume in state',
            fields: { volume_id: req.ID, error: messageOf(err) },
          });
          throw err;
        }
        await names.release(req.Name, req.ID);
        // A folder the plugin left under the volume's ID (one an earlier plugin of this volume
        // made, before an update or a register changed its plugin) stays this agent's, for gc.
        if (req.PluginID !== '' && (await lstat(join(config.volumesDir, req.ID)).catch(() => undefined)))
          await names.rememberId(req.ID).catch(() => {});
        await this.ctx.disks?.forget(req.ID).catch(() => {});
        await this.ctx.mounts?.forget(req.ID).catch(() => {});
        await this.ctx.publish([{ name: req.Name, volume: null }]);
        return { volumeName: req.Name, volumeId: req.ID };
      },
      signal,
    );
  }

  /**
   * Restore at agent start: every volume in client state at once, under one deadline
   * counted from now (volume-restore.ts).
   */
  restore(deadlineMs: number): Promise<RestoreOutcome> {
    return new VolumeRestore(this.ctx).run(deadlineMs);
  }

  /**
   * The name the volume has now, when this request renames it (read with the volume's own
   * lock held by the caller, so nothing renames it meanwhile). A record that does not load
   * renames nothing here: the update fails on it later, or overwrites it.
   */
  private async renamedFrom(req: { ID: string; Name: string }): Promise<string | undefined> {
    const previous = await this.ctx.state.get(req.ID).catch(() => undefined);
    return previous !== undefined && previous.CreateReq.Name !== req.Name ? previous.CreateReq.Name : undefined;
  }

  /** Claims a name under its lock; restore and create share this path, so claims are serialised across processes. */
  private claim(name: string, id: string): Promise<{ wasFree: boolean }> {
    return this.ctx.names.claim(name, id);
  }
}

export function defaultServerVolume(nodePool: string): ServerVolume {
  const now = new Date().toISOString();
  return {
    NodePool: nodePool,
    CapacityBytes: 0n,
    RequestedCapabilities: [],
    Constraints: [],
    CreateTime: now,
    ModifyTime: now,
  };
}
