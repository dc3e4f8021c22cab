import { BUILTIN_MKDIR_ID, restoreRequest, valueOf } from '@dhv/sdk/client';
import { canonicalPath, readMountTable, type MountIdentity } from '@dhv/sdk/host';
import { AgentError } from '../../errors/agent-error.js';
import { goStat } from '../../go/os.js';
import { joinErrors } from '../../go/multierror.js';
import type { HostVolumeUpdate } from '../host-volumes.js';
import { existingVolumePaths } from '../builtin-mkdir.js';
import type { DamagedRecord, VolumeRecord } from '../state/client-state.js';
import { nameTaken } from '../state/name-claims.js';
import { restorableWithVolumesDir } from '../state/volume-health.js';
import { replacedMount, type RestoreDisks } from '../state/volume-disks.js';
import { mountsNow, mountsAfterRestore, mountsMadeSince } from '../state/volume-mounts.js';
import { pluginCreateRequest } from './plugin-requests.js';
import { hostVolume, messageOf, type VolumeManagerContext } from './volume-manager-context.js';

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

/** The host volume manager's restore at agent start (Nomad's restoreFromState). */
export class VolumeRestore {
  constructor(private readonly ctx: VolumeManagerContext) {}

  /**
   * Restore at agent start: every volume in client state at once, under one deadline
   * counted from now. A created volume's plugin runs create again with the saved
   * request, a registered one's path is checked. A failure leaves that volume out (its
   * name stays claimed), and so does a record file that does not load; a missing plugin,
   * or a client state folder that cannot be listed, fails the whole restore, and the node
   * is then told about no dynamic volume at all.
   */
  async run(deadlineMs: number): Promise<RestoreOutcome> {
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
    const settle = (record: VolumeRecord, restored: Awaited<ReturnType<VolumeRestore['restoreOne']>>) => {
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
    /** A plugin's restore that failed, logged as Nomad's client logs it. */
    const pluginFailed = (error: Error & { code?: string }) => {
      this.ctx.log({
        level: 'error',
        message: 'failed to restore',
        fields: { plugin_id: req.PluginID, volume_id: record.ID, error: messageOf(error) },
      });
      return left(error);
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
    if (error) return pluginFailed(error);
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
      if (replaced) return pluginFailed(replaced);
      return note ? { path: result.path, note } : result.path;
    } catch (err) {
      return pluginFailed(err as Error);
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
}

const NAME_TAKEN = Symbol('name taken');

interface RestoreMounts {
  before: ReadonlySet<string>;
  recorded: ReadonlyMap<string, MountIdentity[]>;
  /** Volumes whose mounts `checkRecordedMounts` already recorded. */
  checked: Set<string>;
}
