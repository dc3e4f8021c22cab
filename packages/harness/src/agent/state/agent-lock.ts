import { AsyncLocalStorage } from 'node:async_hooks';
import { lstat, mkdir, readdir, rename, unlink, writeFile } from 'node:fs/promises';
import { createHash, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { acquireVolumeLock } from '@dhv/sdk';
import { processExists } from '@dhv/sdk/host';
import { AgentError } from '../../errors/agent-error.js';
import { MAX_TIMER_MS, wholeNumberFromEnv } from '../../config/environment.js';
import type { StateLayout } from './layout.js';
import { commandOf, lockHolder, processState } from './holder-processes.js';

/**
 * The lock every name's lock also takes, shared; its holders never unlink it, so the file
 * stays. Not a name's key (those are hex digests), so no name can take it.
 */
export const EVERY_NAME_LOCK = 'every-name.lock';
/** Taken on the way in by every holder: a restart waiting for the agent holds it, so no new create overtakes it. */
const DOOR_LOCK = 'door.lock';
const OWNER_PREFIX = 'owner-';
/** A volume ID's lock file: `volume-<id>.lock` (a name's is its hex digest, so the two never meet). */
const VOLUME_LOCK_PREFIX = 'volume-';

/** How often a process waiting at the door looks whether its keeper is stopped. */
const DOOR_LOOK_MS = 500;

/** How long a `dhv` waits to get into the agent before it says who holds it; `$DHV_LOCK_WAIT_MS` overrides. */
export const DEFAULT_LOCK_WAIT_MS = 60_000;

/** What a holder is doing, for a waiter's message: `volume create`, `agent restart`, and the like. */
export interface Work {
  /** What it does, in a user's words (`creating volume "web"`). */
  doing: string;
  /** The volume name it works on, if one. */
  name?: string;
  /** The volume ID it works on, if one. */
  volumeId?: string;
}

interface OwnerNote {
  pid: number;
  command: string;
  doing: string;
  name?: string;
  volumeId?: string;
  mode: 'shared' | 'exclusive';
  /** Still waiting to get in (a waiting exclusive keeps the door). */
  waiting?: boolean;
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
  /** What the current async call chain of this process holds: nested work takes nothing again. */
  private readonly held = new AsyncLocalStorage<'shared' | 'exclusive'>();
  /** This process's own notes: a waiter never names itself. */
  private readonly own = new Set<string>();

  constructor(
    private readonly layout: StateLayout,
    private readonly waitMs: number = lockWaitFromEnv(),
  ) {}

  /** Runs `fn` as the only holder of the agent. */
  async exclusive<T>(work: Work, fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (this.held.getStore() === 'exclusive') return fn();
    // Its own shared hold would keep it out until the wait gave up, blaming "another dhv process".
    if (this.held.getStore() === 'shared')
      throw new Error(`dhv bug: ${work.doing} needs the agent exclusive inside work that holds it shared`);
    const release = await this.enter('exclusive', work, signal);
    try {
      return await this.held.run('exclusive', fn);
    } finally {
      await release();
    }
  }

  /**
   * Runs `fn` holding the agent shared and the lock of volume `id`, from the first read of
   * its record to the last write: Nomad's servers run every call on one volume through
   * `serializeCall(vol.ID, ...)`, so no two operations on one volume overlap, in any process.
   */
  async volume<T>(id: string, work: Work, fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (this.held.getStore() === 'exclusive') return fn();
    return this.shared(
      work,
      async () => {
        const release = await this.acquire(join(this.layout.locks, `${VOLUME_LOCK_PREFIX}${id}.lock`), false, signal, {
          ...work,
          volumeId: id,
        });
        try {
          return await fn();
        } finally {
          await release();
        }
      },
      signal,
    );
  }

  /** Runs `fn` holding the agent shared and the lock of `name`: one create, delete or restore per name at a time. */
  async name<T>(name: string, work: Work, fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    return this.names([name], work, fn, signal);
  }

  /**
   * Runs `fn` holding the agent shared and the locks of every name in `names` (a rename
   * holds the old name and the new), taken in one order (by key) so two renames never wait
   * on each other.
   */
  async names<T>(names: readonly string[], work: Work, fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (this.held.getStore() === 'exclusive') return fn();
    const keyed = [...new Map(names.map((n) => [nameKey(n), n])).entries()].sort(([a], [b]) => (a < b ? -1 : 1));
    return this.shared(
      work,
      async () => {
        const releases: Array<() => Promise<void>> = [];
        try {
          for (const [key, name] of keyed)
            releases.push(await this.acquire(join(this.layout.locks, `${key}.lock`), false, signal, { ...work, name }));
          return await fn();
        } finally {
          for (const release of releases.reverse()) await release();
        }
      },
      signal,
    );
  }

  /** Runs `fn` holding the agent shared: it waits for a restart, and lets every volume's work go on. */
  async shared<T>(work: Work, fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (this.held.getStore() !== undefined) return fn();
    const release = await this.enter('shared', work, signal);
    try {
      return await this.held.run('shared', fn);
    } finally {
      await release();
    }
  }

  /** Whether this call chain holds the agent exclusive now. */
  get heldExclusive(): boolean {
    return this.held.getStore() === 'exclusive';
  }

  private async enter(mode: 'shared' | 'exclusive', work: Work, signal?: AbortSignal): Promise<() => Promise<void>> {
    await mkdir(this.layout.locks, { recursive: true, mode: 0o700 });
    // Noted before waiting: whoever waits behind this process can name it, waiting or holding.
    let note = await this.writeNote(mode, work, true);
    try {
      const leaveDoor = await this.passDoor(mode, work, signal);
      let release: () => Promise<void>;
      try {
        release = await this.acquire(join(this.layout.locks, EVERY_NAME_LOCK), mode === 'shared', signal, work);
      } finally {
        await leaveDoor();
      }
      note = await this.writeNote(mode, work, false, note);
      const held = note;
      return async () => {
        if (held) {
          this.own.delete(held);
          await unlink(held).catch(() => {});
        }
        await release();
      };
    } catch (err) {
      if (note) {
        this.own.delete(note);
        await unlink(note).catch(() => {});
      }
      throw err;
    }
  }

  /**
   * Passes the door, which a process waiting for the agent exclusive keeps (so no stream
   * of creates starves it). A keeper that is stopped (Ctrl-Z, SIGSTOP) keeps no one out: a
   * waiter looks at it every half second and passes by; a killed one lets go with its death.
   */
  private async passDoor(
    mode: 'shared' | 'exclusive',
    work: Work,
    signal: AbortSignal | undefined,
  ): Promise<() => Promise<void>> {
    const door = join(this.layout.locks, DOOR_LOCK);
    // A keeper holds the file the door's path names, and the last one to leave removed it:
    // with no file, a shared entrant passes as if it had taken the door a moment ago and
    // left it, without a flock(1). The agent's own lock, taken next, still decides.
    if (
      mode === 'shared' &&
      !(await lstat(door).then(
        () => true,
        () => false,
      ))
    )
      return async () => {};
    const deadline = performance.now() + this.waitMs;
    for (;;) {
      const look = AbortSignal.timeout(Math.ceil(Math.max(1, Math.min(DOOR_LOOK_MS, deadline - performance.now()))));
      try {
        return await acquireVolumeLock(door, {
          signal: signal ? AbortSignal.any([signal, look]) : look,
          folderMode: 0o700,
          onlyWhileRunning: true,
        });
      } catch (err) {
        if (signal?.aborted) throw shutDown(work);
        if (!look.aborted) throw err;
        // The door only keeps order (the agent's own lock keeps safety), so a keeper stopped
        // before it wrote its PID (the file still names the keeper before it) is passed by
        // too: any exclusive waiter that is stopped.
        const stopped =
          processState(lockHolder(door)) === 'T' ||
          (await this.holders()).some((n) => n.mode === 'exclusive' && n.waiting && processState(n.pid) === 'T');
        if (stopped) return async () => {};
        if (performance.now() >= deadline) throw await this.busy(work);
      }
    }
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
      return await acquireVolumeLock(path, { signal: both, shared, folderMode: 0o700, onlyWhileRunning: true });
    } catch (err) {
      if (signal?.aborted) throw shutDown(work);
      if (timeout.aborted) throw await this.busy(work);
      throw err;
    }
  }

  /**
   * The note is an empty file whose name holds the work (base64url JSON): it takes no block
   * of a full disk. The holder's command line is read from /proc when a waiter needs it.
   * Written as `waiting` before the wait, then renamed to say it holds (`previous`).
   */
  private async writeNote(
    mode: 'shared' | 'exclusive',
    work: Work,
    waiting: boolean,
    previous?: string,
  ): Promise<string | undefined> {
    const named = (doing: string) => {
      const body = {
        doing,
        ...(work.name !== undefined ? { name: work.name.slice(0, 40) } : {}),
        ...(work.volumeId !== undefined ? { volumeId: work.volumeId } : {}),
        mode,
        ...(waiting ? { waiting } : {}),
        since: new Date().toISOString(),
      };
      const encoded = Buffer.from(JSON.stringify(body)).toString('base64url');
      return `${OWNER_PREFIX}${process.pid}-${randomBytes(4).toString('hex')}-${encoded}`;
    };
    // A file name holds at most 255 bytes: what it does is cut short to fit.
    let doing = work.doing.slice(0, 80);
    let name = named(doing);
    while (name.length > 250 && doing.length > 0) name = named((doing = doing.slice(0, -8)));
    const file = join(this.layout.lockOwners, name);
    try {
      if (previous) await rename(previous, file);
      else {
        await mkdir(this.layout.lockOwners, { recursive: true, mode: 0o700 });
        await writeFile(file, '', { mode: 0o600 });
      }
      this.own.add(file);
      if (previous) this.own.delete(previous);
      return file;
    } catch {
      return previous;
    }
  }

  /** The notes of the processes holding or waiting for the agent now (a dead one's note is removed). */
  async holders(): Promise<OwnerNote[]> {
    const dir = this.layout.lockOwners;
    const names = await readdir(dir).catch(() => [] as string[]);
    const notes: OwnerNote[] = [];
    for (const name of names.filter((n) => n.startsWith(OWNER_PREFIX))) {
      const [pidText, , encoded] = name.slice(OWNER_PREFIX.length).split('-');
      const pid = Number(pidText);
      if (!processExists(pid)) {
        await unlink(join(dir, name)).catch(() => {});
        continue;
      }
      if (this.own.has(join(dir, name))) continue;
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

  /**
   * AGENT_BUSY, naming who keeps this process out: the holders of its volume or name, or
   * of the agent, and a process waiting for the agent exclusive ahead of it (it keeps the
   * door), each with its command and work, and `kill -CONT` for a stopped one.
   */
  private async busy(work: Work): Promise<AgentError> {
    const all = await this.holders();
    const on = (same: (n: OwnerNote) => boolean) => all.filter((n) => same(n) && !n.waiting);
    const byVolume = work.volumeId !== undefined ? on((n) => n.volumeId === work.volumeId) : [];
    const byName = work.name !== undefined ? on((n) => n.name === work.name) : [];
    const exclusive = all.filter((n) => n.mode === 'exclusive');
    const holders =
      byVolume.length > 0
        ? byVolume
        : byName.length > 0
          ? byName
          : [
              ...exclusive,
              ...(exclusive.some((n) => !n.waiting) ? [] : all.filter((n) => n.mode === 'shared' && !n.waiting)),
            ];
    const who =
      holders.length === 0
        ? 'another dhv process holds it (it left no note)'
        : holders
            .map(
              (n) =>
                `process ${n.pid} (\`${n.command}\`) ${n.waiting ? 'waits for it ahead of this one' : 'holds it'}, ${n.doing}, since ${n.since}`,
            )
            .join('; ');
    const stopped = holders.filter((n) => processState(n.pid) === 'T').map((n) => n.pid);
    return new AgentError(
      'AGENT_BUSY',
      `gave up ${work.doing} after ${(this.waitMs / 1000).toFixed(1)} s of waiting: the agent is busy: ${who}\n` +
        (stopped.length > 0
          ? `Process ${stopped.join(', ')} is stopped (Ctrl-Z or SIGSTOP): resume it with kill -CONT ${stopped.join(' ')} (or fg), then run this again`
          : 'Wait for it to finish, then run this again (or raise $DHV_LOCK_WAIT_MS)'),
      {
        holders: holders.map((n) => ({
          pid: n.pid,
          command: n.command,
          doing: n.doing,
          ...(n.waiting ? { waiting: true } : {}),
        })),
      },
    );
  }
}

function shutDown(work: Work): AgentError {
  return new AgentError('AGENT_SHUT_DOWN', `stopped ${work.doing} while it waited for the agent: nothing was changed`);
}

function lockWaitFromEnv(): number {
  return wholeNumberFromEnv('DHV_LOCK_WAIT_MS', DEFAULT_LOCK_WAIT_MS, {
    unit: 'milliseconds',
    min: 1,
    max: MAX_TIMER_MS,
  });
}

/** Names are user controlled: hash them into safe file names. */
export function nameKey(name: string): string {
  return createHash('sha256').update(name).digest('hex');
}
