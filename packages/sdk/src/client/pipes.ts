import { spawn } from 'node:child_process';
import { closeSync, constants, openSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { signalProcessGroup } from '../helpers/signals.js';

/**
 * Anonymous pipes for a plugin's stdout and stderr, as Go's os/exec gives them.
 *
 * Node can only hand a child UNIX sockets (libuv's socketpair) or a FIFO, and a plugin
 * sees the difference: `echo x >/dev/stderr` reopens its fd 2, which fails on a socket,
 * and `readlink /proc/self/fd/1` shows `socket:[...]` or the FIFO's path instead of
 * `pipe:[...]`. Node has no pipe(2), but opening `/proc/<pid>/fd/<n>` of another process
 * opens that process's pipe itself. So a batch of pipes comes from one short-lived shell
 * pipeline of `read` builtins (forked, never exec'd) blocked on another descriptor: each
 * stage holds the read end of one pipe and the write end of the next, and touches neither. Both ends are opened here, the pipeline
 * is killed, and the pipes stay with this process until a plugin run takes a pair.
 */

export interface PipeEnds {
  /** Ours: read without blocking. */
  read: number;
  /** The child's: blocking, as a plugin expects its stdout to be. */
  write: number;
  /** `pipe:[inode]`, what /proc shows for either end. */
  id: string;
}

/**
 * Pipes kept ready beyond those asked for, at most: each batch is a spawn of /bin/sh from
 * this process, a fork of all of its memory, which costs more than the batch's stages, and
 * `dhv check` runs hundreds of plugins one after another. A process asks for no spare in
 * its first batch (a `dhv volume create` runs one plugin: a batch of 17 pipes was 16 forks
 * of the shell it never used), then for as many as it has taken, up to this.
 */
const SPARE = 16;
/** A factory that did not produce its pipes within this long has failed (a process limit, a hung /proc). */
const FACTORY_TIMEOUT_MS = 5_000;
/** The longest wait between two looks at the factory's stages (the first is 1 ms, each next twice as long). */
const MAX_LOOK_PAUSE_MS = 4;

const pool: PipeEnds[] = [];
let refill: Promise<void> | undefined;
let unavailable: Error | undefined;
/** Pipes callers wait for: a batch is made big enough for all of them (a discovery of 100 plugins wants 200). */
let waiting = 0;
/** Pipes this process has taken: how many spares its next batch makes (SPARE). */
let taken = 0;
const MAX_BATCH = 256;

/** `count` fresh pipes, or an error saying why anonymous pipes cannot be made here. */
export async function takePipes(count: number): Promise<PipeEnds[]> {
  if (unavailable) throw unavailable;
  waiting += count;
  const got: PipeEnds[] = [];
  try {
    while (got.length < count) {
      const pipe = pool.pop();
      if (pipe) {
        got.push(pipe);
        waiting--;
        taken++;
        continue;
      }
      if (!refill) startRefill();
      try {
        await refill;
      } catch (err) {
        unavailable = err as Error;
        throw unavailable;
      }
    }
    // Made ahead only for a process that has run a plugin before: one run alone (a create) waits for none.
    if (pool.length < 2 && !refill && taken > count) startRefill();
    return got;
  } catch (err) {
    for (const p of got) {
      closePipeEnd(p.read);
      closePipeEnd(p.write);
    }
    throw err;
  } finally {
    waiting -= count - got.length;
  }
}

/** One fresh pipe, or an error saying why anonymous pipes cannot be made here. */
export async function takePipe(): Promise<PipeEnds> {
  return (await takePipes(1))[0]!;
}

/**
 * Starts making `count` pipes now, unless as many are ready or a batch is under way: a
 * run that is about to start then finds them made (the batch's processes run while the
 * caller does the rest of its work, e.g. takes its locks).
 */
export function preparePipes(count: number): void {
  if (unavailable || refill || pool.length >= count) return;
  startRefill(count);
}

export function closePipeEnd(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // already closed
  }
}

/** A batch for every pipe callers wait for, `ahead` more for a run about to start, and the spares. */
function startRefill(ahead = 0): void {
  // One turn of the event loop first, so runs started together are counted into one batch.
  refill = new Promise<void>((resolve) => setImmediate(resolve))
    .then(() => makePipes(Math.max(1, Math.min(MAX_BATCH, waiting + ahead + Math.min(SPARE, taken)))))
    .then(
      (made) => {
        pool.push(...made);
        refill = undefined;
      },
      (err: unknown) => {
        refill = undefined;
        throw err;
      },
    );
  refill.catch(() => undefined); // awaited by takePipe; never an unhandled rejection
}

async function makePipes(count: number): Promise<PipeEnds[]> {
  // Each stage blocks reading fd 9 (our never-written stdin), never the pipes: a stage not
  // yet dead when a plugin writes must not take a byte of its output.
  const stages = Array.from({ length: count + 1 }, () => 'read x <&9').join(' | ');
  const factory = spawn('/bin/sh', ['-c', `exec 9<&0; ${stages}`], {
    stdio: ['pipe', 'ignore', 'ignore'], // stdin never written: the first stage blocks on it
    detached: true,
    env: {},
  });
  const shellPid = factory.pid;
  factory.on('error', () => undefined);
  try {
    if (shellPid === undefined) throw new Error('could not start /bin/sh to make pipes');
    const ours = new Set(pipesHeldBy('self'));
    const deadline = performance.now() + FACTORY_TIMEOUT_MS;
    // The shell forks its stages one by one: a few are there within a millisecond (what one
    // create waits for), a batch of spares takes tens, each look a read of /proc on the way.
    for (let pause = 1; ; pause = Math.min(pause * 2, MAX_LOOK_PAUSE_MS)) {
      const made = openPipesOf(shellPid, count, ours);
      if (made) return made;
      if (performance.now() > deadline) throw new Error(`no pipes from /bin/sh within ${FACTORY_TIMEOUT_MS} ms`);
      await new Promise((r) => setTimeout(r, pause));
    }
  } finally {
    if (shellPid !== undefined) signalProcessGroup(shellPid, 'SIGKILL');
    factory.stdin?.destroy();
  }
}

/** Opens both ends of every pipe between the shell's children, once all `count` are set up. */
function openPipesOf(shellPid: number, count: number, ours: ReadonlySet<string>): PipeEnds[] | undefined {
  let children: string[];
  try {
    children = readFileSync(`/proc/${shellPid}/task/${shellPid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
  } catch {
    return undefined;
  }
  if (children.length < count + 1) return undefined;
  // Every stage also holds whatever pipes were inherited from above (a CI runner's output,
  // a terminal multiplexer's): those are someone else's, and a plugin given one would write
  // into it and have its every holder killed as a leftover. This process and the shell hold
  // each of them; the pipeline's own pipes are held by its stages alone.
  const foreign = new Set([...ours, ...pipesHeldBy(String(shellPid))]);
  const writers = new Map<string, string>();
  const readers = new Map<string, string>();
  for (const pid of children) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      return undefined;
    }
    // The shell moves a stage's stdin aside while `read` takes fd 9: look at every descriptor.
    for (const fd of fds) {
      const id = link(`/proc/${pid}/fd/${fd}`);
      if (!id?.startsWith('pipe:') || foreign.has(id)) continue;
      const mode = accessMode(`/proc/${pid}/fdinfo/${fd}`);
      if (mode === 0) readers.set(id, `/proc/${pid}/fd/${fd}`);
      else if (mode === 1) writers.set(id, `/proc/${pid}/fd/${fd}`);
    }
  }
  const ids = [...writers.keys()].filter((id) => readers.has(id));
  if (ids.length < count) return undefined;
  const made: PipeEnds[] = [];
  try {
    for (const id of ids) {
      const read = openSync(readers.get(id)!, constants.O_RDONLY | constants.O_NONBLOCK);
      let write: number;
      try {
        write = openSync(writers.get(id)!, constants.O_WRONLY);
      } catch (err) {
        closeSync(read);
        throw err;
      }
      made.push({ read, write, id });
    }
  } catch {
    for (const p of made) {
      closePipeEnd(p.read);
      closePipeEnd(p.write);
    }
    return undefined;
  }
  return made;
}

/** The `pipe:[inode]` identities of every descriptor of process `pid` (or `self`). */
function pipesHeldBy(pid: string): string[] {
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return [];
  }
  return fds.map((fd) => link(`/proc/${pid}/fd/${fd}`)).filter((id): id is string => id?.startsWith('pipe:') === true);
}

/** O_RDONLY (0) or O_WRONLY (1), from the `flags:` line of /proc/<pid>/fdinfo/<fd>. */
function accessMode(fdinfo: string): number | undefined {
  try {
    const flags = /^flags:\s*([0-7]+)$/m.exec(readFileSync(fdinfo, 'utf8'))?.[1];
    return flags === undefined ? undefined : parseInt(flags, 8) & 3;
  } catch {
    return undefined;
  }
}

function link(path: string): string | undefined {
  try {
    return readlinkSync(path);
  } catch {
    return undefined;
  }
}
