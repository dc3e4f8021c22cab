import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, fstatSync, openSync, statSync } from 'node:fs';
import { Socket } from 'node:net';
import type { Readable } from 'node:stream';
import {
  findOutputHolders,
  killOutputHolders,
  outputEndsOf,
  parentEndsOf,
  peerSocketsOf,
  liveProcessesOfGroup,
  type LeftRunning,
  type OutputEnd,
  type OutputHolder,
} from './output-holders.js';
import { O_PATH, execKind } from './exec-format.js';
import { diagnoseExecutable, formatDiagnosis } from './spawn-diagnosis.js';
import { processGroupExists, signalProcessGroup, stoppedRunning } from '../helpers/signals.js';
import { closePipeEnd, takePipe, type PipeEnds } from './pipes.js';

/**
 * Runs a plugin executable the way Go's os/exec runs it for the agent: argv
 * `<path> <operation>`, exactly the environment given, stdin /dev/null, stdout and stderr
 * anonymous pipes, and output read until both pipes close, not only until the plugin
 * exits. Where a real agent would hang or run wild, dhv stays in control (and says so):
 * the plugin runs in its own process group, which the deadline and an abort kill whole;
 * a process still holding the pipes at the deadline is killed; output is capped.
 */
export interface SpawnOptions {
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  /** How much of stdout and of stderr to keep; more stdout than this kills the plugin. Default 4 MiB. */
  maxOutputBytes?: number | undefined;
  cwd?: string | undefined;
  /** An O_PATH descriptor of the file to run (from openPlugin): what was checked is what runs. */
  fd?: number | undefined;
  /**
   * How long stdout and stderr may stay open once the plugin has exited before whoever
   * holds them is killed (`outputHeldOpen`). Default: until the deadline.
   */
  outputGraceMs?: number | undefined;
  /**
   * Called with the plugin's PID (its process group's ID) the moment it runs, and with
   * `exited: true` once the group is killed or the run is over: a caller keeping a cleanup
   * journal records the group in between.
   */
  onProcessGroup?: ((pgid: number, exited: boolean) => void) | undefined;
}

/**
 * One run of a plugin as it happened, nothing judged yet: what the SDK's decoders, the
 * conformance checks and `dhv plugin run` all read. The output stays the bytes the plugin
 * wrote (Go decodes bytes); `outputText` is where they become text.
 */
export interface PluginRun {
  /** The arguments after the executable: `[operation]` under an agent. */
  argv: readonly string[];
  /** Exactly the environment the plugin was given. */
  env: Readonly<Record<string, string>>;
  /** Set when the process could not be started at all; `code` is the errno execve gave (or would give). */
  spawnError?: NodeJS.ErrnoException;
  /** dhv's words on why it could not start, for the lines after Nomad's. */
  spawnProblem?: string;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: Buffer;
  stderr: Buffer;
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
  timedOut: boolean;
  aborted: boolean;
  /** The plugin exited, but a process it started still held stdout or stderr at the deadline, and was killed. */
  outputHeldOpen: boolean;
  /** Who held the output then (each was killed); empty where none could be named. */
  outputHolders: OutputHolder[];
  /**
   * Processes of the plugin's group still running when it had exited and its output was
   * closed (a helper started in the background): each was killed, where a real agent
   * leaves them running. Absent where none was.
   */
  leftRunning?: LeftRunning[];
  /** What the plugin's stdout and stderr were: `pipe` as under a real agent; `socket` only where no pipe could be made. */
  stdio: 'pipe' | 'socket';
  durationMs: number;
}

export type { LeftRunning, OutputHolder };

export const DEFAULT_MAX_OUTPUT_BYTES = 4 * 1024 * 1024;

const UTF8 = new TextDecoder();

/** A plugin's stdout or stderr as text, decoded here only: UTF-8, each malformed sequence U+FFFD. */
export function outputText(bytes: Uint8Array): string {
  return UTF8.decode(bytes);
}

/** How long to wait for killed processes to let go of the pipes before returning without them. */
const KILL_WAIT_MS = 2_000;

export async function spawnPlugin(
  executable: string,
  argv: readonly string[],
  env: Readonly<Record<string, string>>,
  options: SpawnOptions,
): Promise<PluginRun> {
  const run = await runPlugin(executable, argv, env, options);
  if (!run.spawnError || run.spawnProblem) return run;
  // execve's one word misleads for a file that is there (CRLF, a missing interpreter or loader): say what the kernel met.
  const diagnosis = diagnoseExecutable(executable);
  return diagnosis ? { ...run, spawnProblem: formatDiagnosis(diagnosis) } : run;
}

async function runPlugin(
  executable: string,
  argv: readonly string[],
  env: Readonly<Record<string, string>>,
  options: SpawnOptions,
): Promise<PluginRun> {
  const given = { argv: [...argv], env: { ...env } };
  if (options.signal?.aborted) return notStarted(given, { aborted: true });
  let fd = options.fd;
  let ownFd = false;
  if (fd === undefined) {
    try {
      fd = openSync(executable, O_PATH);
      ownFd = true;
    } catch (err) {
      return notStarted(given, {
        spawnError: errnoError(executable, (err as NodeJS.ErrnoException).code ?? 'ENOENT'),
      });
    }
  }
  try {
    const kind = execKind(fd);
    if (kind.kind === 'refused')
      return notStarted(given, {
        spawnError: errnoError(executable, kind.errno),
        spawnProblem: kind.fix ? `${kind.why}; ${kind.fix}` : kind.why,
      });
    // An ELF program runs from the descriptor itself, so nothing swapped in at the path since
    // the check can run; argv[0] stays the path. A script is run by its path: its interpreter
    // is handed that path as $0 and opens it again, as under a real agent.
    const execPath = kind.kind === 'elf' ? `/proc/${process.pid}/fd/${fd}` : executable;
    let pgid: number | undefined;
    const tell = options.onProcessGroup;
    const watched = tell ? { ...options, onProcessGroup: (id: number) => tell((pgid = id), false) } : options;
    const run = await startPlugin(
      executable,
      execPath,
      given,
      watched,
      kind.kind === 'script' && !ownFd ? fd : undefined,
    );
    if (pgid !== undefined) tell?.(pgid, true);
    return run;
  } finally {
    if (ownFd) closeSync(fd);
  }
}

interface Given {
  argv: readonly string[];
  env: Readonly<Record<string, string>>;
}

function notStarted(
  given: Given,
  outcome: { spawnError: NodeJS.ErrnoException; spawnProblem?: string } | { aborted: true },
): PluginRun {
  return pluginRunOf({ ...given, exitCode: null, ...outcome });
}

/**
 * A run record from what is known of a run that no live process of this call made (one
 * that never started, or one read back from a recording): everything not given is what a
 * plain, untruncated run over pipes has.
 */
export function pluginRunOf(known: Given & Partial<PluginRun>): PluginRun {
  const empty = Buffer.alloc(0);
  return {
    exitCode: null,
    signal: null,
    stdout: empty,
    stderr: empty,
    stdoutTruncated: false,
    stderrTruncated: false,
    timedOut: false,
    aborted: false,
    outputHeldOpen: false,
    outputHolders: [],
    stdio: 'pipe',
    durationMs: 0,
    ...known,
  };
}

export function errnoError(path: string, code: string): NodeJS.ErrnoException {
  const err: NodeJS.ErrnoException = new Error(`spawn ${path} ${code}`);
  err.code = code;
  err.syscall = 'spawn';
  err.path = path;
  return err;
}

/** A synchronous spawn failure as the errno execve gave; Node's own refusal of a NUL byte is Go's EINVAL. */
function spawnThrew(err: unknown, executable: string): NodeJS.ErrnoException {
  const e = err as NodeJS.ErrnoException;
  if (e.code === 'ERR_INVALID_ARG_VALUE' || e.code === 'ERR_INVALID_ARG_TYPE') return errnoError(executable, 'EINVAL');
  return errnoError(executable, typeof e.code === 'string' ? e.code : 'EIO');
}

async function startPlugin(
  executable: string,
  execPath: string,
  given: Given,
  options: SpawnOptions,
  /** For a script run by its path: the descriptor of the file checked, which the path must still name. */
  checked?: number,
): Promise<PluginRun> {
  const started = performance.now();
  let pipes: [PipeEnds, PipeEnds] | undefined;
  try {
    const out = await takePipe();
    try {
      pipes = [out, await takePipe()];
    } catch (err) {
      closePipeEnd(out.read);
      closePipeEnd(out.write);
      throw err;
    }
  } catch {
    pipes = undefined; // no anonymous pipes here: fall back to Node's sockets
  }
  if (options.signal?.aborted) {
    for (const p of pipes ?? []) {
      closePipeEnd(p.read);
      closePipeEnd(p.write);
    }
    return notStarted(given, { aborted: true });
  }

  let child: ChildProcess;
  try {
    // The last moment before execve opens the path again: it must still be the file checked.
    if (checked !== undefined && !sameFile(checked, executable)) {
      for (const p of pipes ?? []) closePipeEnd(p.read);
      return notStarted(given, {
        spawnError: errnoError(executable, 'ENOENT'),
        spawnProblem: 'it was replaced between the check and the start, so it was not run',
      });
    }
    child = spawn(execPath, [...given.argv], {
      argv0: executable,
      env: { ...given.env },
      cwd: options.cwd,
      detached: true, // its own process group, so the whole group can be killed
      stdio: ['ignore', pipes ? pipes[0].write : 'pipe', pipes ? pipes[1].write : 'pipe'],
    });
    if (child.pid !== undefined) options.onProcessGroup?.(child.pid, false);
  } catch (err) {
    for (const p of pipes ?? []) {
      closePipeEnd(p.read);
      closePipeEnd(p.write);
    }
    return notStarted(given, { spawnError: spawnThrew(err, executable) });
  } finally {
    // The child has its copies (or never started); ours would keep the pipes open forever.
    for (const p of pipes ?? []) closePipeEnd(p.write);
  }

  const streams: [Readable, Readable] = pipes
    ? [
        new Socket({ fd: pipes[0].read, readable: true, writable: false }),
        new Socket({ fd: pipes[1].read, readable: true, writable: false }),
      ]
    : [child.stdout!, child.stderr!];
  // The pipes' identities, to find whoever holds them after the plugin exits, whatever group it moved to.
  const ends: OutputEnd[] = pipes
    ? [
        { id: pipes[0].id, of: 'stdout' },
        { id: pipes[1].id, of: 'stderr' },
      ]
    : [...(child.pid !== undefined ? outputEndsOf(child.pid) : []), ...parentEndsOf(streams)];

  return new Promise((resolve) => {
    const maxOutputBytes = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
    const stdout = new CappedBuffer(maxOutputBytes);
    const stderr = new CappedBuffer(maxOutputBytes);
    let timedOut = false;
    let aborted = false;
    let outputHeldOpen = false;
    let outputHolders: OutputHolder[] = [];
    let spawnError: NodeJS.ErrnoException | undefined;
    let exitCode: number | null = null;
    let exitSignal: NodeJS.Signals | null = null;
    let exited = false;
    let settled = false;
    let open = 2;
    const timers: NodeJS.Timeout[] = [];

    const killGroup = () => {
      if (child.pid !== undefined) signalProcessGroup(child.pid, 'SIGKILL');
    };
    const holders = () => findOutputHolders(pipes ? ends : [...ends, ...peerSocketsOf(ends)]);
    const killHolders = () => killOutputHolders(holders());

    const finish = () => {
      if (settled) return;
      settled = true;
      for (const t of timers) clearTimeout(t);
      options.signal?.removeEventListener('abort', onAbort);
      for (const s of streams) s.destroy();
      // Nothing the plugin started may outlive the call; what still ran is said, since an agent would leave it.
      const leftRunning =
        exited && !outputHeldOpen && !timedOut && !aborted && child.pid !== undefined && processGroupExists(child.pid)
          ? liveProcessesOfGroup(child.pid)
          : [];
      if (exited) killGroup();
      const killedHolders = [...new Set(outputHolders.map((h) => h.pid))];
      const result: PluginRun = {
        ...given,
        ...(spawnError ? { spawnError } : {}),
        exitCode,
        signal: exitSignal,
        stdout: stdout.contents(),
        stderr: stderr.contents(),
        stdoutTruncated: stdout.truncated,
        stderrTruncated: stderr.truncated,
        timedOut,
        aborted,
        outputHeldOpen,
        outputHolders,
        ...(leftRunning.length > 0 ? { leftRunning } : {}),
        stdio: pipes ? 'pipe' : 'socket',
        durationMs: performance.now() - started,
      };
      // The holders were killed: the run is over once they are gone, not merely signalled.
      if (killedHolders.length === 0) resolve(result);
      else void stoppedRunning(killedHolders, KILL_WAIT_MS).then(() => resolve(result));
    };
    const maybeDone = () => {
      if ((exited || spawnError) && open === 0) finish();
    };

    // After a kill, the pipes close once every holder is gone; one that escaped the group
    // (setsid) is found by the pipes it holds; one that cannot die (stuck in the kernel) is left.
    const stopWaitingSoon = () => {
      timers.push(
        setTimeout(() => {
          killHolders();
          timers.push(setTimeout(finish, KILL_WAIT_MS));
        }, KILL_WAIT_MS),
      );
    };

    // The plugin is done; a process it left behind holds its output. A real agent waits
    // for that process as long as it lives; dhv stops it (at the deadline, or after the grace).
    const releaseOutput = () => {
      if (outputHeldOpen || settled) return;
      outputHeldOpen = true;
      outputHolders = holders();
      killOutputHolders(outputHolders);
      killGroup();
      stopWaitingSoon();
    };

    const onAbort = () => {
      aborted = true;
      killGroup();
      stopWaitingSoon();
    };

    streams[0].on('data', (chunk: Buffer) => {
      if (!stdout.push(chunk)) {
        killGroup(); // more than any response can be: stop it now
        stopWaitingSoon();
      }
    });
    streams[1].on('data', (chunk: Buffer) => stderr.push(chunk));
    for (const s of streams) {
      let counted = false;
      const closed = () => {
        if (counted) return;
        counted = true;
        open--;
        maybeDone();
      };
      s.on('end', closed);
      s.on('close', closed);
      s.on('error', closed);
    }

    child.once('error', (err: NodeJS.ErrnoException) => {
      if (child.pid === undefined) {
        spawnError = errnoError(executable, err.code ?? 'EIO');
        finish();
      }
    });

    child.once('exit', (code, sig) => {
      exited = true;
      exitCode = code;
      exitSignal = sig;
      maybeDone();
      if (!settled && options.outputGraceMs !== undefined)
        timers.push(setTimeout(releaseOutput, options.outputGraceMs));
    });

    if (child.pid !== undefined) {
      timers.push(
        setTimeout(() => {
          if (exited) return releaseOutput();
          timedOut = true;
          killGroup();
          stopWaitingSoon();
        }, options.timeoutMs),
      );
      if (options.signal?.aborted) onAbort();
      else options.signal?.addEventListener('abort', onAbort, { once: true });
    }
  });
}

function sameFile(fd: number, path: string): boolean {
  try {
    const checked = fstatSync(fd);
    const now = statSync(path);
    return checked.dev === now.dev && checked.ino === now.ino;
  } catch {
    return false;
  }
}

class CappedBuffer {
  private chunks: Buffer[] = [];
  private size = 0;
  truncated = false;

  constructor(private readonly cap: number) {}

  /** Keeps what fits under the cap; returns false once the cap was passed. */
  push(chunk: Buffer): boolean {
    if (this.size >= this.cap) {
      this.truncated = true;
      return false;
    }
    const room = this.cap - this.size;
    const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
    this.chunks.push(kept);
    this.size += kept.length;
    if (chunk.length > room) this.truncated = true;
    return !this.truncated;
  }

  contents(): Buffer {
    return Buffer.concat(this.chunks);
  }
}
