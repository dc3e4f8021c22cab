import { lstat } from 'node:fs/promises';
import { join } from 'node:path';
import type { AgentConfig } from '../../config/agent-config.js';
import type { ClientCreateRequest, ClientState, DamagedRecord, VolumeRecord } from '../state/client-state.js';
import { AgentError } from '../../errors/agent-error.js';
import { goStat } from '../../go/os.js';
import type { HostVolumeConfig, HostVolumeUpdate } from '../host-volumes.js';
import type { AgentLock } from '../state/agent-lock.js';
import { nameTaken, type NameClaims } from '../state/name-claims.js';
import {
  pluginCreateRequest,
  pluginDeleteRequest,
  type ClientDeleteRequest,
  type ClientRegisterRequest,
} from './plugin-requests.js';
import { joinErrors } from '../../go/multierror.js';
import { restorableWithVolumesDir, type VolumeHealth } from '../state/volume-health.js';
import type { RestoreDisks, VolumeDisks } from '../state/volume-disks.js';
import { BUILTIN_MKDIR_ID, cleanupDeleteRequest, restoreRequest, valueOf, type PluginRunner } from '@dhv/sdk/client';
import { existingVolumePaths } from '../builtin-mkdir.js';
import { canonicalPath, readMountTable, type MountIdentity } from '@dhv/sdk/host';
import { mountsNow, mountsAfterRestore, mountsMadeSince, type VolumeMounts } from '../state/volume-mounts.js';
import { replacedMount } from '../state/volume-disks.js';

/** The client state calls the host volume manager makes; a test may hand in one that fails. */
export type ClientStateStore = Pick<ClientState, 'put' | 'remove' | 'list' | 'scan' | 'get'>;

/** A warn or error line as Nomad's host volume manager logs it, with its fields. */
export interface AgentLogLine {
  level: 'warn' | 'error';
  message: string;
  fields: Record<string, string>;
}

export interface VolumeManagerContext {
  config: Pick<AgentConfig, 'volumesDir' | 'pluginDir' | 'nodePool'>;
  runner: PluginRunner;
  state: ClientStateStore;
  names: NameClaims;
  /** The agent lock: each volume's work holds its name, a restore holds the whole agent. */
  lock: AgentLock;
  /** Tells the node about a volume (or its removal); the node's map and the servers follow. */
  publish: (updates: HostVolumeUpdate[]) => Promise<void>;
  /** Aborted when the agent shuts down: every plugin run in flight is killed. */
  signal: AbortSignal;
  log: (line: AgentLogLine) => void;
  /** Marks a volume unavailable while its delete runs, so a killed delete never leaves it ready. */
  health?: VolumeHealth;
  /** The disk each volume was created on: the built-in mkdir's restore line says when it moved. */
  disks?: VolumeDisks;
  /** The mounts each volume's plugin made, by identity: recorded at create and restore. */
  mounts?: VolumeMounts;
  /** The servers' refusal of a delete (a volume in use), checked under the volume's lock before anything runs. */
  beforeDelete?: (req: ClientDeleteRequest) => Promise<void>;
}

/** Nomad's ClientHostVolumeCreateResponse. */
export interface ClientCreateResponse {
  volumeName: string;
  volumeId: string;
  hostPath: string;
  capacityBytes: bigint;
}

/** The servers' side of a record, kept beside the client's so `volume status` can show it. */
export type ServerVolume = VolumeRecord['Volume'];

export interface RestoredVolume {
  record: VolumeRecord;
  /** The path the plugin returned this time; client state keeps the first one. */
  path: string;
  /** Said on its line: the built-in mkdir made its folder again on another filesystem than at create. */
  note?: string;
}

export interface FailedRestore {
  record: VolumeRecord;
  error: Error & { code?: string };
}

export interface RestoreOutcome {
  /** What restore hands the node, in completion order (a later update of a name wins). */
  updates: HostVolumeUpdate[];
  restored: RestoredVolume[];
  failed: FailedRestore[];
  /** Record files that do not load: those volumes alone are left out (their names stay claimed). */
  damaged: DamagedRecord[];
  /** Set when restore as a whole failed (state unreadable, a plugin missing): the node gets no dynamic volume. */
  error?: Error & { code?: string };
}

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
    const { config, runner, state, names, signal } = this.ctx;
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
   * counted from now. A created volume's plugin runs create again with the saved
   * request, a registered one's path is checked. A failure leaves that volume out (its
   * name stays claimed), and so does a record file that does not load; a missing plugin,
   * or a client state folder that cannot be listed, fails the whole restore, and the node
   * is then told about no dynamic volume at all.
   */
  async restore(deadlineMs: number): Promise<RestoreOutcome> {
    const startedAt = performance.now();
    let records: VolumeRecord[];
    let damaged: DamagedRecord[];
    try {
      ({ records, damaged } = await this.ctx.state.scan());
    } catch (err) {
      this.ctx.log({ level: 'error', message: 'failed to restore state', fields: { error: messageOf(err) } });
      // Nomad's claims die with the agent: a restore that cannot read state claims nothing.
      await this.ctx.names.replaceAll(new Map());
      return { updates: [], restored: [], failed: [], damaged: [], error: err as Error };
    }
    const outcome: RestoreOutcome = { updates: [], restored: [], failed: [], damaged };
    for (const d of damaged)
      this.ctx.log({
        level: 'error',
        message: 'failed to restore volume',
        fields: { volume_id: d.id, error: d.error.message },
      });
    const errors: Error[] = [];
    const remainingMs = () => Math.max(1, Math.round(deadlineMs - (performance.now() - startedAt)));
    const claims = await this.claimForRestore(records, outcome);
    // The volumes dir is looked at once for the whole restore, not once per volume.
    const { failed } = await restorableWithVolumesDir(records, this.ctx.config.volumesDir);
    const volumesDirMissing = new Map(failed.map((f) => [f.record.ID, f.error]));
    const disks = await this.ctx.disks?.forRestore(this.ctx.config.volumesDir);
    const mounts = this.ctx.mounts ? await this.mountsForRestore() : undefined;
    // The built-in's creates of volumes whose folders are there answer at once: one look at the volumes dir for them all.
    const builtinPaths = records.some((r) => r.CreateReq.PluginID === BUILTIN_MKDIR_ID)
      ? await existingVolumePaths(this.ctx.config.volumesDir)
      : undefined;
    const settle = (record: VolumeRecord, restored: Awaited<ReturnType<VolumeManager['restoreOne']>>) => {
      const path = typeof restored === 'object' && restored !== null ? restored.path : restored;
      if (path === null) return;
      // Nomad's name claim is an in-memory map: a second volume of a claimed name is refused at
      // once, before the holder's plugin answers, so its empty update never hides the holder.
      if (path === NAME_TAKEN) outcome.updates.unshift({ name: record.CreateReq.Name, volume: null });
      else if (path === undefined) outcome.updates.push({ name: record.CreateReq.Name, volume: null });
      else {
        outcome.restored.push({
          record,
          path,
          ...(typeof restored === 'object' && restored?.note ? { note: restored.note } : {}),
        });
        outcome.updates.push({
          name: record.CreateReq.Name,
          volume: hostVolume(record.CreateReq.Name, record.ID, path),
        });
      }
    };
    // Those restored at once are settled first, as they would be: every other restore waits on I/O.
    const running: number[] = [];
    for (const [i, record] of records.entries()) {
      const claim = claims[i]!;
      const atOnce = claim instanceof Error ? undefined : this.restoredAtOnce(record, claim, builtinPaths, disks);
      if (atOnce === undefined) running.push(i);
      else settle(record, atOnce);
    }
    await Promise.all(
      running.map(async (i) => {
        const record = records[i]!;
        try {
          const claim = claims[i]!;
          if (claim instanceof Error) throw claim;
          settle(record, await this.restoreOne(record, claim, remainingMs, outcome, volumesDirMissing, disks, mounts));
        } catch (err) {
          errors.push(err as Error);
          outcome.failed.push({ record, error: err as Error });
        }
      }),
    );
    await disks?.finish().catch(() => {});
    if (mounts) await this.recordMountsMade(mounts, outcome.restored).catch(() => {});
    if (errors.length > 0) {
      outcome.error = joinErrors(errors);
      this.ctx.log({ level: 'error', message: 'failed to restore state', fields: { error: outcome.error.message } });
    }
    return outcome;
  }

  /**
   * Each volume's name claim, as Nomad's restore takes them into a map it has just emptied:
   * true when claimed, false when an earlier volume of the same name holds it (logged), or
   * the error of a plugin lookup, which fails the whole restore. Called with the agent held
   * exclusive, so no create or delete runs meanwhile; the claims are written as one change.
   */
  private async claimForRestore(
    records: readonly VolumeRecord[],
    outcome: RestoreOutcome,
  ): Promise<(boolean | null | Error)[]> {
    const { config, runner, names } = this.ctx;
    // Each plugin looked up once, before the loop: no wait per volume.
    const pluginIds = [...new Set(records.map((r) => r.CreateReq.PluginID).filter((id) => id !== ''))];
    const looked = new Map(
      await Promise.all(
        pluginIds.map(
          async (id) =>
            [
              id,
              await runner.lookup(config.pluginDir, id).then(
                () => undefined,
                (err: unknown) => err as Error,
              ),
            ] as const,
        ),
      ),
    );
    const winners = new Map<string, string>();
    // A volume whose record does not load keeps the names it holds: its name is not free.
    const damagedIds = new Set(outcome.damaged.map((d) => d.id));
    if (damagedIds.size > 0)
      for (const [name, id] of Object.entries(await names.all())) if (damagedIds.has(id)) winners.set(name, id);
    const claims: (boolean | null | Error)[] = [];
    for (const [i, record] of records.entries()) {
      const req = record.CreateReq;
      const missing = req.PluginID === '' ? undefined : looked.get(req.PluginID);
      if (missing) {
        claims[i] = missing;
        continue;
      }
      const holder = winners.get(req.Name);
      if (holder === undefined || holder === req.ID) {
        winners.set(req.Name, req.ID);
        claims[i] = true;
        continue;
      }
      const err = nameTaken(req.Name, holder);
      this.ctx.log({
        level: 'error',
        message: 'error during restore',
        fields: { volume_id: req.ID, volume_name: req.Name, error: err.message },
      });
      outcome.failed.push({ record, error: err });
      claims[i] = false;
    }
    let recorded: Set<string> | undefined;
    await names.replaceAll(winners, {
      has: (id) => (recorded ??= new Set([...records.map((r) => r.ID), ...damagedIds])).has(id),
    });
    return claims;
  }

  /**
   * A built-in volume whose folder the volumes dir lists: its create would return that path
   * at once (its first step), so it is restored without a run, and without a turn of the
   * event loop. Undefined for every other volume.
   */
  private restoredAtOnce(
    record: VolumeRecord,
    claimed: boolean | null,
    builtinPaths: ((volumeId: string) => string | undefined) | undefined,
    disks: RestoreDisks | undefined,
  ): string | { path: string; note: string } | undefined {
    if (claimed !== true || !builtinPaths || record.CreateReq.PluginID !== BUILTIN_MKDIR_ID) return undefined;
    const path = builtinPaths(record.CreateReq.ID);
    if (path === undefined) return undefined;
    const note = disks?.movedNote(record);
    disks?.restored(record.ID, path);
    return note ? { path, note } : path;
  }

  /** The path to publish, undefined for a volume left out (logged), null for one deleted meanwhile; throws what fails the whole restore. */
  private async restoreOne(
    record: VolumeRecord,
    claimed: boolean | null,
    remainingMs: () => number,
    outcome: RestoreOutcome,
    volumesDirMissing: ReadonlyMap<string, AgentError>,
    disks: RestoreDisks | undefined,
    mounts?: RestoreMounts,
  ): Promise<string | { path: string; note: string } | undefined | null | typeof NAME_TAKEN> {
    const { config, runner, signal } = this.ctx;
    const req = record.CreateReq;
    const left = (error: Error & { code?: string }) => {
      outcome.failed.push({ record, error });
      return undefined;
    };
    if (claimed === null) return null;
    if (!claimed) return NAME_TAKEN;
    const registered = req.PluginID === '';
    if (registered) {
      try {
        await goStat(record.HostPath);
        return record.HostPath;
      } catch (err) {
        const error = new AgentError('HOST_PATH_MISSING', messageOf(err), {
          volumeId: record.ID,
          hostPath: record.HostPath,
        });
        this.ctx.log({
          level: 'error',
          message: 'failed to restore: could not verify host path',
          fields: { volume_id: record.ID, path: record.HostPath, error: error.message },
        });
        return left(error);
      }
    }
    const error = volumesDirMissing.get(record.ID);
    if (error) {
      this.ctx.log({
        level: 'error',
        message: 'failed to restore',
        fields: { plugin_id: req.PluginID, volume_id: record.ID, error: error.message },
      });
      return left(error);
    }
    // Every plugin runs, as under Nomad: a plugin that keeps its disk's record (both
    // reference plugins do) refuses a volumes dir on another disk itself.
    const builtin = req.PluginID === BUILTIN_MKDIR_ID;
    const note = builtin ? disks?.movedNote(record) : undefined;
    try {
      const result = valueOf(
        await runner.run('create', {
          plugin: { pluginDir: config.pluginDir, pluginId: req.PluginID },
          request: restoreRequest(pluginCreateRequest(req, config)),
          signal,
          timeoutMs: remainingMs(),
        }),
      );
      disks?.restored(record.ID, result.path);
      const replaced = mounts ? await this.checkRecordedMounts(mounts, record, result.path) : undefined;
      if (replaced) {
        this.ctx.log({
          level: 'error',
          message: 'failed to restore',
          fields: { plugin_id: req.PluginID, volume_id: record.ID, error: replaced.message },
        });
        return left(replaced);
      }
      return note ? { path: result.path, note } : result.path;
    } catch (err) {
      this.ctx.log({
        level: 'error',
        message: 'failed to restore',
        fields: { plugin_id: req.PluginID, volume_id: record.ID, error: messageOf(err) },
      });
      return left(err as Error);
    }
  }

  /** The mounts recorded for each volume, and every mount before any plugin of this restore ran. */
  private async mountsForRestore(): Promise<RestoreMounts> {
    return { before: await mountsNow(), recorded: await this.ctx.mounts!.all(), checked: new Set() };
  }

  /**
   * A volume with recorded mounts, after its plugin's restore: the mounts it has now are
   * recorded, and a recorded place that holds another filesystem fails its restore, so it
   * is never published as ready on top of something that is not the volume.
   */
  private async checkRecordedMounts(
    mounts: RestoreMounts,
    record: VolumeRecord,
    path: string,
  ): Promise<AgentError | undefined> {
    const recorded = mounts.recorded.get(record.ID);
    if (!recorded) return undefined;
    const table = await readMountTable();
    const made = await mountsMadeSince(mounts.before, table, await canonicalPath(path));
    const now = await mountsAfterRestore(recorded, made, table);
    mounts.checked.add(record.ID);
    if (now.length > 0) await this.ctx.mounts!.put(record.ID, now).catch(() => {});
    const problem = await replacedMount(path, now.length > 0 ? now : recorded, table);
    return problem && new AgentError(problem.code, problem.error, { volumeId: record.ID, hostPath: path });
  }

  /** The mounts the restore made for volumes that had none recorded (a volume mounted for the first time), one table read for all. */
  private async recordMountsMade(mounts: RestoreMounts, restored: readonly RestoredVolume[]): Promise<void> {
    const candidates = restored.filter(
      (r) =>
        r.record.CreateReq.PluginID !== '' &&
        r.record.CreateReq.PluginID !== BUILTIN_MKDIR_ID &&
        !mounts.checked.has(r.record.ID),
    );
    if (candidates.length === 0) return;
    const table = await readMountTable();
    for (const r of candidates) {
      const made = await mountsMadeSince(mounts.before, table, await canonicalPath(r.path));
      if (made.length > 0) await this.ctx.mounts!.put(r.record.ID, made);
    }
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

const NAME_TAKEN = Symbol('name taken');

interface RestoreMounts {
  before: ReadonlySet<string>;
  recorded: ReadonlyMap<string, MountIdentity[]>;
  /** Volumes whose mounts `checkRecordedMounts` already recorded. */
  checked: Set<string>;
}

export function hostVolume(name: string, id: string, path: string): HostVolumeConfig {
  return { Name: name, Path: path, ReadOnly: false, ID: id };
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

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
