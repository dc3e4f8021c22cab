import { lstat, mkdir, readdir } from 'node:fs/promises';
import { BUILTIN_MKDIR_ID } from '@dhv/sdk/client';
import { isRegistered, type VolumeRecord } from './client-state.js';
import { AgentError } from '../../errors/agent-error.js';
import { isAbsolute, join } from 'node:path';
import { readRegularFile, removeFileDurably, writeFileDurably } from './durable-file.js';
import { stateLayout } from './layout.js';
import { VolumeDisks } from './volume-disks.js';

export interface VolumeFailure {
  /** Why the last restore failed. */
  error: string;
  /** The error's code (a PluginError or AgentError code). */
  code: string;
  at: string;
}

/**
 * Which volumes are `unavailable` because their last restore failed. Each `dhv` command
 * is a new process, so the outcome of the last `agent restart` is kept in the data dir:
 * one file per failed volume, removed when the volume is created again or deleted.
 */
export class VolumeHealth {
  private readonly dir: string;
  constructor(
    dataDir: string,
    private readonly disks = new VolumeDisks(dataDir),
  ) {
    this.dir = stateLayout(dataDir).volumeFailures;
  }

  async markFailed(id: string, failure: VolumeFailure): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    await writeFileDurably(join(this.dir, `${id}.json`), JSON.stringify(failure));
  }

  async clear(id: string): Promise<void> {
    await removeFileDurably(join(this.dir, `${id}.json`));
  }

  /** Replaces the whole set after a restore: stale failures of volumes that restored are dropped. */
  async replaceAll(failures: Map<string, VolumeFailure>): Promise<void> {
    const current = await this.all();
    for (const id of current.keys()) if (!failures.has(id)) await this.clear(id);
    for (const [id, failure] of failures) await this.markFailed(id, failure);
  }

  /**
   * Runs a plugin's delete with the volume marked unavailable meanwhile, so a delete
   * killed mid-way never leaves a volume that says ready. A delete that fails in this
   * process puts back what was there. Best effort: on a full disk the mark is skipped
   * rather than the delete refused.
   */
  async whileDeleting(id: string, fn: () => Promise<void>): Promise<void> {
    const before = (await this.all()).get(id);
    const at = new Date().toISOString();
    await this.markFailed(id, {
      code: 'DELETE_UNFINISHED',
      error: 'a delete of this volume started and did not finish; run dhv volume delete again',
      at,
    }).catch(() => {});
    try {
      await fn();
    } catch (err) {
      await (before ? this.markFailed(id, before) : this.clear(id)).catch(() => {});
      throw err;
    }
  }

  /**
   * The failures of `records`, and a volume whose path is gone counts as one: status
   * never says ready for a directory that is not there, nor for a volume mounted at create
   * whose mount is gone or whose image was deleted or cut short.
   */
  async judge(records: readonly VolumeRecord[]): Promise<Map<string, VolumeFailure>> {
    const failures = await this.all();
    const unknown = records.filter((r) => !failures.has(r.ID));
    for (const [id, failure] of await this.disks.unusable(unknown)) failures.set(id, failure);
    await Promise.all(
      records.map(async (r) => {
        // A relative path, as a plugin may answer: Nomad's client publishes it as given and
        // never looks at it, and here it would name another folder for every caller.
        if (failures.has(r.ID) || !isAbsolute(r.HostPath)) return;
        const info = await lstat(r.HostPath).catch(() => undefined);
        if (info === undefined) {
          failures.set(r.ID, {
            code: 'HOST_PATH_MISSING',
            error: `the volume's path ${r.HostPath} is gone; run dhv agent restart to restore it, or delete the volume`,
            at: '',
          });
        }
      }),
    );
    return failures;
  }

  async all(): Promise<Map<string, VolumeFailure>> {
    const out = new Map<string, VolumeFailure>();
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch {
      return out;
    }
    for (const name of names.filter((n) => n.endsWith('.json'))) {
      try {
        out.set(name.slice(0, -5), JSON.parse(await readRegularFile(join(this.dir, name))) as VolumeFailure);
      } catch {
        // A failure note that does not load only loses the reason; the volume stays unavailable.
        out.set(name.slice(0, -5), { error: 'restore failed (reason unreadable)', code: 'UNKNOWN', at: '' });
      }
    }
    return out;
  }
}

/**
 * Splits off the volumes a restore must not hand to their plugin because the volumes dir
 * is gone (a disk not mounted, a mistyped path): Nomad never creates the volumes dir, and
 * a plugin asked to restore into it would make an empty volume on the wrong filesystem.
 * The built-in mkdir makes missing parents as Nomad's does, so its volumes go ahead.
 */
export async function restorableWithVolumesDir(
  records: readonly VolumeRecord[],
  volumesDir: string,
): Promise<{ restorable: VolumeRecord[]; failed: Array<{ record: VolumeRecord; error: AgentError }> }> {
  const info = await lstat(volumesDir).catch(() => undefined);
  if (info !== undefined) return { restorable: [...records], failed: [] };
  const restorable: VolumeRecord[] = [];
  const failed: Array<{ record: VolumeRecord; error: AgentError }> = [];
  for (const record of records) {
    if (isRegistered(record) || record.CreateReq.PluginID === BUILTIN_MKDIR_ID) restorable.push(record);
    else {
      failed.push({
        record,
        error: new AgentError(
          'VOLUMES_DIR_MISSING',
          `volumes dir ${volumesDir} does not exist, so volume ${record.ID} was not restored and the volumes dir was not created\n` +
            `Mount the disk it lives on (or fix host_volumes_dir), then run dhv agent restart`,
          { volumeId: record.ID, volumesDir },
        ),
      });
    }
  }
  return { restorable, failed };
}
