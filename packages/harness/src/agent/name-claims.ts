import { mkdir, readFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { withVolumeLock } from '@dhv/sdk';
import { removeFileDurably, writeFileDurably } from './durable-file.js';
import { dataDirLayout } from '../config/data-dir.js';

/**
 * Volume names are unique per node. Nomad keeps a name → ID map in memory; across `dhv`
 * processes the map lives on disk, one claim file per name, changed only while holding
 * that name's lock (the SDK's process lock, which survives a SIGKILLed holder). A claim
 * is written before the plugin runs and outlives the operation; it counts only while
 * the claiming volume has a client state record, so a crash can never strand a name.
 */
export class NameClaims {
  private readonly dir: string;
  private readonly lockDir: string;

  constructor(dataDir: string) {
    this.dir = dataDirLayout(dataDir).nameClaims;
    this.lockDir = dataDirLayout(dataDir).locks;
  }

  /** Runs `fn` holding the lock of `name`: at most one create or delete per name at a time, across processes. */
  async withLock<T>(name: string, fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    await mkdir(this.lockDir, { recursive: true, mode: 0o700 });
    return withVolumeLock(join(this.lockDir, `${key(name)}.lock`), fn, signal ? { signal } : {});
  }

  /** The volume ID holding `name`, if any (call with the lock held). */
  async holder(name: string): Promise<string | undefined> {
    try {
      const claim = JSON.parse(await readFile(this.file(name), 'utf8')) as { Name?: string; ID?: string };
      return claim.Name === name && typeof claim.ID === 'string' ? claim.ID : undefined;
    } catch {
      return undefined;
    }
  }

  async claim(name: string, id: string): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    await writeFileDurably(this.file(name), JSON.stringify({ Name: name, ID: id }));
  }

  /** Releases `name` if `id` holds it. */
  async release(name: string, id: string): Promise<void> {
    if ((await this.holder(name)) === id) await removeFileDurably(this.file(name));
  }

  private file(name: string): string {
    return join(this.dir, `${key(name)}.json`);
  }
}

/** Names are user controlled: hash them into safe file names. */
function key(name: string): string {
  return createHash('sha256').update(name).digest('hex');
}
