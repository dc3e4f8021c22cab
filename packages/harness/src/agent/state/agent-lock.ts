import { readFileSync } from 'node:fs';
import { mkdir, readdir, unlink, writeFile } from 'node:fs/promises';
import { createHash, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { acquireVolumeLock } from '@dhv/sdk';
import { AgentError } from '../../errors/agent-error.js';
import { MAX_TIMER_MS, wholeNumberFromEnv } from '../../config/environment.js';
import type { StateLayout } from './layout.js';

/**
 * The lock every name's lock also takes, shared; its holders never unlink it, so the file
 * stays. Not a name's key (those are hex digests), so no name can take it.
 */
export const EVERY_NAME_LOCK = 'every-name.lock';
/** Taken on the way in by every holder: a restart waiting for the agent holds it, so no new create overtakes it. */
const DOOR_LOCK = 'door.lock';
const OWNER_PREFIX = 'owner-';

/** How long a `dhv` waits to get into the agent before it says who holds it; `$DHV_LOCK_WAIT_MS` overrides. */
export const DEFAULT_LOCK_WAIT_MS = 60_000;

/** What a holder is doing, for a waiter's message: `volume create`, `agent restart`, and the like. */
export interface Work {
  /** What it does, in a user's words (`creating volume "web"`). */
  doing: string;
  /** The volume name it works on, if one. */
  name?: string;
}

interface OwnerNote {
  pid: number;
  command: string;
  doing: string;
  name?: string;
  mode: 'shared' | 'exclusive';
  since: string;
}

/**
 * The one concurrency discipline of the agent: every `dhv` process on a data dir goes
 * through this lock, so they behave as one agent. Work on one volume (create, register,
 * delete, an orphan's removal) holds the agent shared plus its name's lock; work on the
 * whole node (restart, reboot, gc --remove) holds it exclusive, so it never runs beside any
 * of them. Everyone first passes the door, which a waiting restart keeps: a stream of
 * creates cannot starve it. A waiter gives up after a bounded time, naming the processes
 * holding the agent and what they do (each holder leaves a note, `locks/owner-*.json`), and
 * gives up at once when its signal aborts (Ctrl-C).
 *
 * In one process the lock is reentrant: work already holding the agent exclusive runs its
 * volumes' steps without taking their locks again (which would wait on itself).
 */
export class AgentLock {
  private exclusiveDepth = 0;

  constructor(
    private readonly layout: StateLayout,
    private readonly waitMs: number = lockWaitFromEnv(),
  ) {}

  /** Runs `fn` as the only holder of the agent. */
  async exclusive<T>(work: Work, fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (this.exclusiveDepth > 0) return this.nested(fn);
    const release = await this.enter('exclusive', work, signal);
    this.exclusiveDepth++;
    try {
      return await fn();
    } finally {
      this.exclusiveDepth--;
      await release();
    }
  }

  /** Runs `fn` holding the agent shared and the lock of `name`: one create, delete or restore per name at a time. */
  async name<T>(name: string, work: Work, fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (this.exclusiveDepth > 0) return fn();
    const release = await this.enter('shared', { ...work, name }, signal);
    try {
      const releaseName = await this.acquire(join(this.layout.locks, `${nameKey(name)}.lock`), false, signal, {
        ...work,
        name,
      });
      try {
        return await fn();
      } finally {
        await releaseName();
      }
    } finally {
      await release();
    }
  }

  /** Runs `fn` holding the agent shared: it waits for a restart, and lets every volume's work go on. */
  async shared<T>(work: Work, fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (this.exclusiveDepth > 0) return fn();
    const release = await this.enter('shared', work, signal);
    try {
      return await fn();
    } finally {
      await release();
    }
  }

  /** Whether this process holds the agent exclusive now. */
  get heldExclusive(): boolean {
    return this.exclusiveDepth > 0;
  }

  private async nested<T>(fn: () => Promise<T>): Promise<T> {
    this.exclusiveDepth++;
    try {
      return await fn();
    } finally {
      this.exclusiveDepth--;
    }
  }

  private async enter(mode: 'shared' | 'exclusive', work: Work, signal?: AbortSignal): Promise<() => Promise<void>> {
    await mkdir(this.layout.locks, { recursive: true, mode: 0o700 });
    const leaveDoor = await this.acquire(join(this.layout.locks, DOOR_LOCK), false, signal, work);
    let release: () => Promise<void>;
    try {
      release = await this.acquire(join(this.layout.locks, EVERY_NAME_LOCK), mode === 'shared', signal, work);
    } finally {
      await leaveDoor();
    }
    const note = await this.writeNote(mode, work);
    return async () => {
      if (note) await unlink(note).catch(() => {});
      await release();
    };
  }

  private async acquire(
    path: string,
    shared: boolean,
    signal: AbortSignal | undefined,
    work: Work,
  ): Promise<() => Promise<void>> {
    const timeout = AbortSignal.timeout(this.waitMs);
    const both = signal ? AbortSignal.any([signal, timeout]) : timeout;
    try {
      return await acquireVolumeLock(path, { signal: both, shared, folderMode: 0o700 });
    } catch (err) {
      if (signal?.aborted) {
        throw new AgentError('AGENT_SHUT_DOWN', `stopped while waiting to ${work.doing}: nothing was changed`);
      }
      if (timeout.aborted) throw await this.busy(work);
      throw err;
    }
  }

  /**
   * The note is an empty file whose name holds the work (base64url JSON): it takes no block
   * of a full disk. The holder's command line is read from /proc when a waiter needs it.
   */
  private async writeNote(mode: 'shared' | 'exclusive', work: Work): Promise<string | undefined> {
    const body = {
      doing: work.doing.slice(0, 80),
      ...(work.name !== undefined ? { name: work.name.slice(0, 40) } : {}),
      mode,
      since: new Date().toISOString(),
    };
    const encoded = Buffer.from(JSON.stringify(body)).toString('base64url');
    const file = join(
      this.layout.lockOwners,
      `${OWNER_PREFIX}${process.pid}-${randomBytes(4).toString('hex')}-${encoded}`,
    );
    try {
      await mkdir(this.layout.lockOwners, { recursive: true, mode: 0o700 });
      await writeFile(file, '', { mode: 0o600 });
      return file;
    } catch {
      return undefined;
    }
  }

  /** The notes of the processes holding the agent now (a dead holder's note is removed). */
  async holders(): Promise<OwnerNote[]> {
    const dir = this.layout.lockOwners;
    const names = await readdir(dir).catch(() => [] as string[]);
    const notes: OwnerNote[] = [];
    for (const name of names.filter((n) => n.startsWith(OWNER_PREFIX))) {
      const [pidText, , encoded] = name.slice(OWNER_PREFIX.length).split('-');
      const pid = Number(pidText);
      if (!alive(pid)) {
        await unlink(join(dir, name)).catch(() => {});
        continue;
      }
      try {
        const body = JSON.parse(Buffer.from(encoded ?? '', 'base64url').toString()) as Omit<
          OwnerNote,
          'pid' | 'command'
        >;
        notes.push({ ...body, pid, command: commandOf(pid) });
      } catch {
        // not a note
      }
    }
    return notes;
  }

  private async busy(work: Work): Promise<AgentError> {
    const all = await this.holders();
    const holders =
      work.name !== undefined && all.some((n) => n.name === work.name)
        ? all.filter((n) => n.name === work.name)
        : all.some((n) => n.mode === 'exclusive')
          ? all.filter((n) => n.mode === 'exclusive')
          : all;
    const who =
      holders.length === 0
        ? 'another dhv process holds it (it left no note)'
        : holders.map((n) => `process ${n.pid} (\`${n.command}\`) holds it, ${n.doing}, since ${n.since}`).join('; ');
    const stopped = holders.filter((n) => processState(n.pid) === 'T').map((n) => n.pid);
    return new AgentError(
      'AGENT_BUSY',
      `gave up after ${(this.waitMs / 1000).toFixed(1)} s waiting to ${work.doing}: the agent is busy: ${who}\n` +
        (stopped.length > 0
          ? `Process ${stopped.join(', ')} is stopped (Ctrl-Z or SIGSTOP): resume it with kill -CONT ${stopped.join(' ')} (or fg), then run this again`
          : 'Wait for it to finish, then run this again (or raise $DHV_LOCK_WAIT_MS)'),
      { holders: holders.map((n) => ({ pid: n.pid, command: n.command, doing: n.doing })) },
    );
  }
}

function lockWaitFromEnv(): number {
  return wholeNumberFromEnv('DHV_LOCK_WAIT_MS', DEFAULT_LOCK_WAIT_MS, {
    unit: 'milliseconds',
    min: 1,
    max: MAX_TIMER_MS,
  });
}

/** A process's command line as `dhv <args>` (its node and script paths left out). */
function commandOf(pid: number): string {
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    return ['dhv', ...argv.slice(2)].join(' ').slice(0, 300);
  } catch {
    return 'dhv';
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The one-letter state of a process from /proc (T: stopped), or undefined. */
function processState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  } catch {
    return undefined;
  }
}

/** Names are user controlled: hash them into safe file names. */
export function nameKey(name: string): string {
  return createHash('sha256').update(name).digest('hex');
}
