import { lstat, mkdir, readdir, unlink } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { removeFreeLock, withVolumeLock } from '@dhv/sdk';
import {
  readRegularFile,
  removeFileDurably,
  syncFileSystemOf,
  writeFileAtomically,
  writeFileDurably,
} from './durable-file.js';
import { AgentError } from '../errors/agent-error.js';
import { dataDirLayout } from '../config/data-dir.js';

/**
 * The lock every name's lock also takes, shared; its holders never unlink it, so the file
 * stays. Not a name's key (those are hex digests), so no name can take it.
 */
export const EVERY_NAME_LOCK = 'every-name.lock';

/** Nomad's ErrVolumeNameExists, word for word. */
export const VOLUME_NAME_EXISTS = 'volume name already exists on this node';

/**
 * The agent's volume-name locks: a map of name to volume ID, as Nomad's host volume
 * manager keeps it in memory. A name held by one ID refuses every other ID; the holder
 * itself may claim it again. A claim lasts until it is released by name (a failed
 * create or update, a cleanup after a failed state write, a delete) or the agent
 * restarts (`clear`, then restore claims every name again). Every `dhv` command is a new
 * process, so the map lives on disk: one file per name, changed only under that name's
 * lock (the SDK's process lock, which survives a SIGKILLed holder).
 */
export class NameClaims {
  private readonly dir: string;
  private readonly lockDir: string;
  private readonly idDir: string;
  private readonly recordsDir: string;

  constructor(private readonly dataDir: string) {
    this.recordsDir = dataDirLayout(dataDir).volumeRecords;
    this.dir = dataDirLayout(dataDir).nameClaims;
    this.lockDir = dataDirLayout(dataDir).locks;
    this.idDir = dataDirLayout(dataDir).claimedIds;
  }

  /**
   * Runs `fn` holding the lock of `name`: at most one create, delete or restore per name at
   * a time, across processes. It also holds the lock of every name, shared, so that
   * `withEveryName` can exclude them all at once.
   */
  async withLock<T>(name: string, fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    await mkdir(this.lockDir, { recursive: true, mode: 0o700 });
    const options = signal ? { signal } : {};
    return withVolumeLock(
      this.everyNameLock(),
      () => withVolumeLock(join(this.lockDir, `${key(name)}.lock`), fn, options),
      { ...options, shared: true },
    );
  }

  /**
   * Runs `fn` as if holding the lock of every name, with one lock rather than one per name
   * (a restore claims thousands of names at once): no `withLock` runs meanwhile.
   */
  async withEveryName<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    await mkdir(this.lockDir, { recursive: true, mode: 0o700 });
    return withVolumeLock(this.everyNameLock(), fn, signal ? { signal } : {});
  }

  private everyNameLock(): string {
    return join(this.lockDir, EVERY_NAME_LOCK);
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

  /** The volume ID holding `name`, if any. */
  async holder(name: string): Promise<string | undefined> {
    return (await this.readClaim(this.file(name)))?.ID;
  }

  /**
   * Claims `name` for `id` (call with the name's lock held). Returns whether the name was
   * free before (Nomad's "new volume", which decides whether a failed state write runs
   * the cleanup delete); throws when another ID holds it.
   */
  async claim(name: string, id: string, { durable = true }: { durable?: boolean } = {}): Promise<{ wasFree: boolean }> {
    let holder = await this.holder(name);
    // Nomad's map dies with the agent. Here a claim is a file: one left by a `dhv` killed
    // mid-create (its volume never reached client state) is no claim, since everything that
    // claims a name does so under its lock and finishes, or releases it, before letting go.
    if (holder !== undefined && holder !== id && !(await this.hasRecord(holder))) {
      await this.release(name);
      holder = undefined;
    }
    if (holder !== undefined && holder !== id) throw nameTaken(name, holder);
    if (holder === undefined) {
      await mkdir(this.dir, { recursive: true, mode: 0o700 });
      // The ID outlives a later claim of the same name, so gc still knows the volume was ours.
      await mkdir(this.idDir, { recursive: true, mode: 0o700 });
      const write = durable ? writeFileDurably : writeFileAtomically;
      await write(join(this.idDir, id), '');
      await write(this.file(name), JSON.stringify({ Name: name, ID: id }));
    }
    return { wasFree: holder === undefined };
  }

  private hasRecord(id: string): Promise<boolean> {
    return lstat(join(this.recordsDir, `${id}.json`)).then(
      () => true,
      () => false,
    );
  }

  /** Releases `name`, whoever holds it (Nomad releases by name alone). */
  async release(name: string): Promise<void> {
    const holder = await this.holder(name);
    await removeFileDurably(this.file(name));
    if (holder !== undefined) await this.forgetId(holder);
  }

  /** Every claim, `{name: volume ID}`. */
  async all(): Promise<Record<string, string>> {
    const out: Record<string, string> = {};
    for (const file of await this.files()) {
      const claim = await this.readClaim(join(this.dir, file));
      if (claim) out[claim.Name] = claim.ID;
    }
    return out;
  }

  /** Forgets every claim: the agent's memory at a restart. */
  async clear(): Promise<void> {
    const files = await this.files();
    for (const file of files) await unlink(join(this.dir, file)).catch(() => {});
    if (files.length > 0) await syncFileSystemOf(this.dir);
  }

  /** Makes claims made with `durable: false` durable, all at once. */
  async sync(): Promise<void> {
    await syncFileSystemOf(this.dataDir);
  }

  private async files(): Promise<string[]> {
    try {
      return (await readdir(this.dir)).filter((n) => n.endsWith('.json'));
    } catch {
      return [];
    }
  }

  /** Whether a create of this agent ever claimed a name for volume `id` (and it was not released since). */
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

  private async readClaim(file: string): Promise<{ Name: string; ID: string } | undefined> {
    try {
      const claim = JSON.parse(await readRegularFile(file)) as { Name?: unknown; ID?: unknown };
      return typeof claim.Name === 'string' && typeof claim.ID === 'string'
        ? { Name: claim.Name, ID: claim.ID }
        : undefined;
    } catch {
      return undefined;
    }
  }

  private file(name: string): string {
    return join(this.dir, `${key(name)}.json`);
  }
}

function nameTaken(name: string, holder: string): AgentError {
  return new AgentError(
    'VOLUME_NAME_EXISTS',
    `${VOLUME_NAME_EXISTS}\n"${name}" is held by volume ${holder}: choose another name, or set id = "${holder}" to update that volume`,
    { name, volumeId: holder },
  );
}

/** Names are user controlled: hash them into safe file names. */
function key(name: string): string {
  return createHash('sha256').update(name).digest('hex');
}
