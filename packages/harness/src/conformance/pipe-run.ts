import { spawn } from 'node:child_process';
import { close, constants, open } from 'node:fs';
import { readdir, readlink } from 'node:fs/promises';
import { promisify } from 'node:util';
import { Socket } from 'node:net';
import { join } from 'node:path';
import { runTool } from '@dhv/sdk';

/**
 * Runs a plugin with its stdout and stderr on real pipes, as Go's os/exec gives them to
 * it under a Nomad agent (node's child_process would hand it sockets), and reads both
 * until every writer has closed them, as the agent does. Named pipes made in `dir` stand
 * in for the agent's anonymous ones: to the plugin both are FIFOs, so `/dev/stderr` and
 * `tee /dev/stdout` behave as under Nomad.
 */
export interface PipeRun {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  spawnError?: string;
  timedOut: boolean;
  stdout: string;
  stderr: string;
  /** Processes that still held stdout or stderr `graceMs` after the plugin exited (then killed). */
  holders: Array<{ pid: number; command: string; holds: 'stdout' | 'stderr' }>;
}

export interface PipeRunOptions {
  env: Record<string, string>;
  cwd: string;
  timeoutMs: number;
  /** How long after the plugin's exit its pipes may stay open before whoever holds them is named. */
  graceMs: number;
  /** Where the named pipes are made (a directory of the check's own). */
  dir: string;
}

const openFd = promisify(open) as (path: string, flags: number) => Promise<number>;
const closeFd = promisify(close);

interface Reader {
  text: () => string;
  closed: Promise<void>;
  isClosed: () => boolean;
  destroy: () => void;
}

async function openFifo(path: string): Promise<{ reader: Reader; writeFd: number; close: () => Promise<void> }> {
  await runTool('mkfifo', ['-m', '0600', path], { debianPackage: 'coreutils' });
  // Non-blocking, so the read end opens with no writer yet; then the write end finds a reader.
  // Raw descriptors: the socket owns the read end and closes it.
  const readFd = await openFd(path, constants.O_RDONLY | constants.O_NONBLOCK);
  const writeFd = await openFd(path, constants.O_WRONLY);
  const socket = new Socket({ fd: readFd, readable: true, writable: false });
  const chunks: Buffer[] = [];
  let ended = false;
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  const closed = new Promise<void>((resolve) => {
    socket.once('end', () => {
      ended = true;
      resolve();
    });
    socket.once('error', () => {
      ended = true;
      resolve();
    });
  });
  return {
    reader: {
      text: () => Buffer.concat(chunks).toString('utf8'),
      closed,
      isClosed: () => ended,
      destroy: () => socket.destroy(),
    },
    writeFd,
    close: () => closeFd(writeFd),
  };
}

/** Every process (other than this one) with `path` open, found in /proc. */
async function processesHolding(path: string): Promise<Array<{ pid: number; command: string }>> {
  const found: Array<{ pid: number; command: string }> = [];
  for (const entry of await readdir('/proc').catch(() => [] as string[])) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    const fds = await readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
    for (const fd of fds) {
      const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
      if (target === path || target === `${path} (deleted)`) {
        const command = await readlink(`/proc/${pid}/exe`).catch(() => '?');
        found.push({ pid, command });
        break;
      }
    }
  }
  return found;
}

export async function runWithPipes(
  executable: string,
  argv: readonly string[],
  options: PipeRunOptions,
): Promise<PipeRun> {
  const outPath = join(options.dir, 'stdout.fifo');
  const errPath = join(options.dir, 'stderr.fifo');
  const out = await openFifo(outPath);
  const err = await openFifo(errPath);
  let timedOut = false;
  let spawnError: string | undefined;
  const child = spawn(executable, [...argv], {
    env: options.env,
    cwd: options.cwd,
    stdio: ['ignore', out.writeFd, err.writeFd],
    detached: true,
  });
  // Listening before anything else is awaited: a quick plugin may exit meanwhile.
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    child.once('error', (e) => {
      spawnError = e.message;
      resolve({ code: null, signal: null });
    });
  });
  // Only the plugin may hold the write ends now.
  await Promise.all([out.close(), err.close()]);
  const timer = setTimeout(() => {
    timedOut = true;
    try {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }, options.timeoutMs);
  const { code, signal } = await exited;
  clearTimeout(timer);
  const bothClosed = Promise.all([out.reader.closed, err.reader.closed]);
  await Promise.race([bothClosed, new Promise((resolve) => setTimeout(resolve, options.graceMs))]);
  const holders: PipeRun['holders'] = [];
  for (const [reader, path, holds] of [
    [out.reader, outPath, 'stdout'],
    [err.reader, errPath, 'stderr'],
  ] as const) {
    if (reader.isClosed()) continue;
    for (const holder of await processesHolding(path)) holders.push({ ...holder, holds });
  }
  for (const { pid } of holders) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  if (holders.length > 0) await Promise.race([bothClosed, new Promise((resolve) => setTimeout(resolve, 2000))]);
  out.reader.destroy();
  err.reader.destroy();
  return {
    exitCode: code,
    signal,
    ...(spawnError ? { spawnError } : {}),
    timedOut,
    stdout: out.reader.text(),
    stderr: err.reader.text(),
    holders,
  };
}
