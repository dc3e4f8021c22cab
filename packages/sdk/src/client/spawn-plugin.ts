import { spawn } from 'node:child_process';
import { killOutputHolders, outputEndsOf, parentEndsOf, peerSocketsOf } from './output-holders.js';
import { execFormatError } from './exec-format.js';

/**
 * Runs a plugin executable in its own process group with an exact environment, and
 * stays in control of it: a deadline and an abort signal kill the whole group, output
 * is capped, and the call returns promptly even when a process the plugin left behind
 * still holds its stdout open.
 */
export interface SpawnOptions {
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  maxOutputBytes: number;
  cwd?: string | undefined;
}

export interface SpawnResult {
  /** Set when the process could not be started at all (ENOENT, EACCES, ENOEXEC...). */
  spawnError?: NodeJS.ErrnoException;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: Buffer;
  stderr: Buffer;
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
  timedOut: boolean;
  aborted: boolean;
  /** The plugin exited, but a process it started kept stdout or stderr open. */
  outputHeldOpen: boolean;
  durationMs: number;
}

/**
 * How long stdout and stderr may stay open after the plugin exits before we call it held
 * open. The kernel closes an exiting process's pipe ends before its parent hears of the
 * exit, so only a process the plugin left behind keeps them open that long; the margin is
 * for a caller whose event loop is busy (an agent restoring hundreds of volumes at once).
 */
const CLOSE_GRACE_MS = 1_000;

export const DEFAULT_MAX_OUTPUT_BYTES = 4 * 1024 * 1024;

/** How long to wait for a killed plugin to be gone before returning without it. */
const KILL_WAIT_MS = 2_000;

export async function spawnPlugin(
  executable: string,
  argv: readonly string[],
  env: Readonly<Record<string, string>>,
  options: SpawnOptions,
): Promise<SpawnResult> {
  const formatError = await execFormatError(executable);
  if (formatError) return notStarted({ spawnError: formatError });
  // Cancelled already: nothing may start.
  if (options.signal?.aborted) return notStarted({ aborted: true });
  return startPlugin(executable, argv, env, options);
}

function notStarted(outcome: { spawnError: NodeJS.ErrnoException } | { aborted: true }): SpawnResult {
  const empty = Buffer.alloc(0);
  return {
    ...outcome,
    exitCode: null,
    signal: null,
    stdout: empty,
    stderr: empty,
    stdoutTruncated: false,
    stderrTruncated: false,
    timedOut: false,
    aborted: 'aborted' in outcome,
    outputHeldOpen: false,
    durationMs: 0,
  };
}

function startPlugin(
  executable: string,
  argv: readonly string[],
  env: Readonly<Record<string, string>>,
  options: SpawnOptions,
): Promise<SpawnResult> {
  const started = performance.now();
  return new Promise((resolve) => {
    const stdout = new CappedBuffer(options.maxOutputBytes);
    const stderr = new CappedBuffer(options.maxOutputBytes);
    let timedOut = false;
    let aborted = false;
    let outputHeldOpen = false;
    let exitCode: number | null = null;
    let exitSignal: NodeJS.Signals | null = null;
    let settled = false;
    let exited = false;
    const timers: NodeJS.Timeout[] = [];

    const child = spawn(executable, [...argv], {
      env: { ...env },
      cwd: options.cwd,
      detached: true, // its own process group, so the whole group can be killed
      stdio: ['ignore', 'pipe', 'pipe'],
    });

    // Read now, while the child surely holds them: they identify a daemon that escapes the group.
    const outputEnds = child.pid !== undefined ? outputEndsOf(child.pid) : [];
    const parentEnds = parentEndsOf([child.stdout, child.stderr]);

    const killGroup = () => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // ESRCH: the group is already gone.
      }
    };

    const finish = (spawnError?: NodeJS.ErrnoException) => {
      if (settled) return;
      settled = true;
      for (const t of timers) clearTimeout(t);
      options.signal?.removeEventListener('abort', onAbort);
      child.stdout?.destroy();
      child.stderr?.destroy();
      resolve({
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
        durationMs: performance.now() - started,
      });
    };

    const onAbort = () => {
      aborted = true;
      killGroup();
      stopWaitingSoon();
    };

    // A process stuck in uninterruptible sleep (a hung mount, a dead NFS server) does not
    // die even from SIGKILL; a caller that gave up on it must not wait on it forever.
    const stopWaitingSoon = () => timers.push(setTimeout(() => finish(), KILL_WAIT_MS));

    child.stdout!.on('data', (chunk: Buffer) => {
      if (!stdout.push(chunk)) killGroup(); // more than any response can be: stop it now
    });
    child.stderr!.on('data', (chunk: Buffer) => stderr.push(chunk));

    child.once('error', (err: NodeJS.ErrnoException) => {
      if (child.pid === undefined) finish(err);
    });

    child.once('exit', (code, sig) => {
      exited = true;
      exitCode = code;
      exitSignal = sig;
      timers.push(
        setTimeout(
          // Through setImmediate: if this process was too busy to read the pipes' end
          // before the grace ran out, their EOF is read first and the run ends normally.
          () =>
            setImmediate(() => {
              if (settled) return;
              // Both streams already read to their end: the close is only late, nothing holds them.
              if (child.stdout?.readableEnded && child.stderr?.readableEnded) return finish();
              outputHeldOpen = true;
              killGroup();
              killOutputHolders([...outputEnds, ...peerSocketsOf(parentEnds)]);
              // Whatever escaped the group and still holds the pipe, we stop waiting for it.
              timers.push(setTimeout(() => finish(), CLOSE_GRACE_MS));
            }),
          CLOSE_GRACE_MS,
        ),
      );
    });

    child.once('close', () => {
      killGroup(); // nothing the plugin started may outlive it
      if (exited) finish();
    });

    if (child.pid !== undefined) {
      timers.push(
        setTimeout(() => {
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
