import { readdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import {
  NotAProcessError,
  isProcessId,
  processGroupExists,
  processStartTicks,
  signalProcess,
  stoppedRunning,
} from '@dhv/sdk/host';

/** Whether a process exists and is not a zombie (a killed orphan may wait for a reaper that never comes). */
export function processAlive(pid: number): boolean {
  return processStartTicks(pid) !== undefined;
}

/**
 * The PID a plugin wrote to `file` (`echo $$ > file`), once the whole line is there. The
 * shell makes the file empty before it writes: read in between, it would give 0, and a
 * signal to 0 reaches the test's own process group (and CI with it).
 */
export async function pidWrittenTo(file: string, timeoutMs = 15_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  let text: string;
  for (;;) {
    text = await readFile(file, 'utf8').catch(() => '');
    const pid = /^([0-9]+)\n/.exec(text)?.[1];
    if (pid !== undefined && Number(pid) > 1) return Number(pid);
    if (Date.now() >= deadline)
      throw new Error(`no PID written to ${file} within ${timeoutMs} ms (it holds ${JSON.stringify(text)})`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** The PIDs a fixture recorded, one a line, in `<fixture>.pids` (a line still being written is not one yet). */
export async function recordedPids(pidFile: string): Promise<number[]> {
  const text = await readFile(pidFile, 'utf8').catch(() => '');
  return text
    .split('\n')
    .slice(0, -1)
    .map((line) => Number(line.trim()))
    .filter((pid) => Number.isInteger(pid) && pid > 1);
}

/** PIDs still alive after up to `graceMs` (SIGKILL is asynchronous: the kernel needs a moment). */
export function survivors(pids: readonly number[], graceMs = 1_000): Promise<number[]> {
  return stoppedRunning(pids, graceMs);
}

/** Kills whatever a test left running; throws (after the rest) for a number that names no single process. */
export function killAll(pids: readonly number[]): void {
  signalProcesses(pids, 'SIGKILL');
}

/** Processes whose command line mentions `needle` (a plugin a killed `dhv` left running, for example). */
function processesMentioning(needle: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(needle) && processAlive(Number(name)))
        pids.push(Number(name));
    } catch {
      // gone
    }
  }
  return pids;
}

/** Kills every process whose command line mentions `needle` (the plugins a test's killed `dhv` left waiting); never throws. */
export function killProcessesMentioning(needle: string): void {
  killAll(processesMentioning(needle));
}

/** Waits until no process mentions `needle`, up to `timeoutMs`; returns those still running. */
export async function waitForProcessesMentioning(needle: string, timeoutMs = 15_000): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const left = processesMentioning(needle);
    if (left.length === 0 || Date.now() >= deadline) return left;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** `pid` and every process below it (its flock(1) children, its plugins), as Ctrl-Z stops a foreground job. */
export function processTree(pid: number): number[] {
  const out = [pid];
  for (const entry of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) out.push(...processTree(Number(entry)));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** Sends `signal` to each of `pids` that is still there; throws (after the rest) for a number that names no single process. */
export function signalProcesses(pids: readonly number[], signal: NodeJS.Signals): void {
  const refused: unknown[] = [];
  for (const pid of pids) {
    try {
      signalProcess(pid, signal);
    } catch (err) {
      if (!(err instanceof NotAProcessError)) throw err;
      refused.push(pid);
    }
  }
  if (refused.length > 0) throw new NotAProcessError('process', refused.join(', '));
}

/** Waits (bounded) for process group `pgid` to be gone; killed processes take a moment to be reaped. */
export async function groupGone(pgid: number, waitMs = 3000): Promise<boolean> {
  if (!isProcessId(pgid)) throw new NotAProcessError('process group', pgid);
  const until = Date.now() + waitMs;
  while (processGroupExists(pgid)) {
    if (Date.now() > until) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
  return true;
}
