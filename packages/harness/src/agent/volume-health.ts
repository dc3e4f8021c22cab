import { mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { removeFileDurably, writeFileDurably } from './durable-file.js';
import { dataDirLayout } from '../config/data-dir.js';

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

  constructor(dataDir: string) {
    this.dir = dataDirLayout(dataDir).volumeFailures;
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
        out.set(name.slice(0, -5), JSON.parse(await readFile(join(this.dir, name), 'utf8')) as VolumeFailure);
      } catch {
        // A failure note that does not load only loses the reason; the volume stays unavailable.
        out.set(name.slice(0, -5), { error: 'restore failed (reason unreadable)', code: 'UNKNOWN', at: '' });
      }
    }
    return out;
  }
}
