import { readdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';

/** Whether a process exists and is not a zombie (a killed orphan may wait for a reaper that never comes). */
function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** The PIDs a fixture recorded, one a line, in `<fixture>.pids`. */
export async function recordedPids(pidFile: string): Promise<number[]> {
  const text = await readFile(pidFile, 'utf8').catch(() => '');
  return text
    .split('\n')
    .map((line) => Number(line.trim()))
    .filter((pid) => Number.isInteger(pid) && pid > 0);
}

/** PIDs still alive after up to `graceMs` (SIGKILL is asynchronous: the kernel needs a moment). */
export async function survivors(pids: readonly number[], graceMs = 1_000): Promise<number[]> {
  const deadline = Date.now() + graceMs;
  for (;;) {
    const alive = pids.filter(processAlive);
    if (alive.length === 0 || Date.now() >= deadline) return alive;
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Kills whatever a failed test left running; never throws. */
export function killAll(pids: readonly number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
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

/** Sends `signal` to each of `pids` that is still there; never throws. */
export function signalProcesses(pids: readonly number[], signal: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // gone meanwhile
    }
  }
}
