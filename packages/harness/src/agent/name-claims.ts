import { lstat, mkdir, readdir } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { removeFreeLock, withVolumeLock } from '@dhv/sdk';
import { readRegularFile, removeFileDurably, writeFileDurably } from './durable-file.js';

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
  private readonly idDir: string;

  constructor(dataDir: string) {
    this.dir = join(dataDir, 'client', 'host_volume_names');
    this.lockDir = join(dataDir, 'client', 'locks');
    this.idDir = join(dataDir, 'client', 'host_volume_ids');
  }

  /** Runs `fn` holding the lock of `name`: at most one create or delete per name at a time, across processes. */
  async withLock<T>(name: string, fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    await mkdir(this.lockDir, { recursive: true, mode: 0o700 });
    return withVolumeLock(join(this.lockDir, `${key(name)}.lock`), fn, signal ? { signal } : {});
  }

  /** Removes name lock files that holders killed meanwhile left behind and nobody holds; returns them. */
  async sweepFreeLocks(): Promise<string[]> {
    const names = await readdir(this.lockDir).catch(() => [] as string[]);
    const removed: string[] = [];
    for (const name of names.filter((n) => n.endsWith('.lock'))) {
      if (await removeFreeLock(join(this.lockDir, name))) removed.push(join(this.lockDir, name));
    }
    return removed;
  }

  /** The volume ID holding `name`, if any (call with the lock held). */
  async holder(name: string): Promise<string | undefined> {
    try {
      const claim = JSON.parse(await readRegularFile(this.file(name))) as { Name?: string; ID?: string };
      return claim.Name === name && typeof claim.ID === 'string' ? claim.ID : undefined;
    } catch {
      return undefined;
    }
  }

  async claim(name: string, id: string): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    // The ID outlives a later claim of the same name, so gc still knows the volume was ours.
    await mkdir(this.idDir, { recursive: true, mode: 0o700 });
    await writeFileDurably(join(this.idDir, id), '');
    await writeFileDurably(this.file(name), JSON.stringify({ Name: name, ID: id }));
  }

  /** Whether a create of this agent ever claimed a name for volume `id` (and it was not deleted since). */
  async wasClaimed(id: string): Promise<boolean> {
    return lstat(join(this.idDir, id)).then(
      () => true,
      () => false,
    );
  }

  /** Forgets that `id` was claimed, once its volume is gone. */
  async forgetId(id: string): Promise<void> {
    await removeFileDurably(join(this.idDir, id)).catch(() => {});
  }

  /** Releases `name` if `id` holds it. */
  async release(name: string, id: string): Promise<void> {
    if ((await this.holder(name)) === id) await removeFileDurably(this.file(name));
    await this.forgetId(id);
  }

  private file(name: string): string {
    return join(this.dir, `${key(name)}.json`);
  }
}

/** Names are user controlled: hash them into safe file names. */
function key(name: string): string {
  return createHash('sha256').update(name).digest('hex');
}
