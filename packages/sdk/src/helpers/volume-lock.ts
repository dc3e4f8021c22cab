import { link, readFile, rename, unlink, writeFile, mkdir } from './fs-calls.js';
import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { PluginFailure } from './errors.js';

/**
 * A per-volume lock between processes that survives a crashed holder (the agent kills a
 * plugin with SIGKILL at its deadline). The lock file names its holder by PID and process
 * start time; a waiter that finds the holder gone takes the lock over.
 */

let tokens = 0;

/** A name no other holder uses: this process's PID, its start, and a counter. */
function uniqueSuffix(): string {
  return `${process.pid}.${process.hrtime.bigint().toString(36)}.${++tokens}`;
}

function startTime(pid: number): string {
  try {
    // Field 22 of /proc/<pid>/stat, counted after the command name, which may hold spaces.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? '';
  } catch {
    return '';
  }
}

const ME = () => `${process.pid} ${startTime(process.pid)}`;

function holderAlive(owner: string): boolean {
  const [pidText, started] = owner.trim().split(' ');
  const pid = Number(pidText);
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return false;
  }
  // A reused PID belongs to a process that started at another time.
  return started === undefined || started === '' || startTime(pid) === started;
}

export interface LockOptions {
  signal?: AbortSignal;
  /** How often to look again while another process holds the lock. */
  pollMs?: number;
}

export async function withVolumeLock<T>(lockPath: string, fn: () => Promise<T>, options: LockOptions = {}): Promise<T> {
  const release = await acquireVolumeLock(lockPath, options);
  try {
    return await fn();
  } finally {
    await release();
  }
}

export async function acquireVolumeLock(lockPath: string, options: LockOptions = {}): Promise<() => Promise<void>> {
  const owner = ME();
  const token = `${lockPath}.${uniqueSuffix()}`;
  await writeToken(token, owner);
  try {
    for (;;) {
      try {
        await link(token, lockPath); // atomic: fails if anyone holds the lock
        return async () => {
          if ((await readFile(lockPath, 'utf8').catch(() => '')) === owner) await unlink(lockPath).catch(() => {});
        };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      const holder = await readFile(lockPath, 'utf8').catch(() => '');
      if (holder !== '' && !holderAlive(holder)) {
        await breakStaleLock(lockPath, holder);
        continue;
      }
      if (options.signal?.aborted) {
        throw new PluginFailure('ELOCKED', `gave up waiting for the lock ${lockPath}, held by process ${holder.split(' ')[0]}`);
      }
      await new Promise((r) => setTimeout(r, options.pollMs ?? 25));
    }
  } finally {
    await unlink(token).catch(() => {});
  }
}

/**
 * Writes this holder's token beside the lock. A plugin may remove the lock's folder once
 * it is empty (no lock, no token in it), so a folder that vanishes in between is made again.
 */
async function writeToken(token: string, owner: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    await mkdir(dirname(token), { recursive: true, mode: 0o700 });
    try {
      await writeFile(token, owner, { mode: 0o600 });
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= 10) throw err;
    }
  }
}

/** Moves a dead holder's lock aside, and puts it back if a live holder's lock was moved by mistake. */
async function breakStaleLock(lockPath: string, staleOwner: string): Promise<void> {
  const aside = `${lockPath}.stale.${uniqueSuffix()}`;
  try {
    await rename(lockPath, aside);
  } catch {
    return; // someone else broke it first
  }
  const moved = await readFile(aside, 'utf8').catch(() => '');
  if (moved !== staleOwner && moved !== '' && holderAlive(moved)) {
    await link(aside, lockPath).catch(() => {});
  }
  await unlink(aside).catch(() => {});
}
