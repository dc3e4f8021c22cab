import { readFileSync } from 'node:fs';

/**
 * The only place that sends signals. kill(2) reads its PID argument as more than a process:
 * 0 is the caller's own process group and -1 every process the caller may signal (as root,
 * all of them), so a PID read as 0 from a file caught half-written, or a record saying 1,
 * would kill dhv, its caller and its caller's caller. These refuse every PID but a whole
 * number above 1.
 */

/** Thrown for a PID or process group ID that names no single process or group. */
export class NotAProcessError extends RangeError {
  constructor(what: 'process' | 'process group', id: unknown) {
    super(
      `refused to signal ${what} ${String(id)}: only a whole number above 1 names one ${what} (0 is the caller's own group, -1 every process)`,
    );
    this.name = 'NotAProcessError';
  }
}

/** Whether `id` names one process (or group): a whole number above 1. */
export function isProcessId(id: unknown): id is number {
  return typeof id === 'number' && Number.isSafeInteger(id) && id > 1;
}

function send(target: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(target, signal);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw err;
  }
}

/** Sends `signal` to process `pid`: false when there is no such process. */
export function signalProcess(pid: number, signal: NodeJS.Signals): boolean {
  if (!isProcessId(pid)) throw new NotAProcessError('process', pid);
  return send(pid, signal);
}

/** Sends `signal` to every process of group `pgid`: false when the group has none left. */
export function signalProcessGroup(pgid: number, signal: NodeJS.Signals): boolean {
  if (!isProcessId(pgid)) throw new NotAProcessError('process group', pgid);
  return send(-pgid, signal);
}

/** Whether process `pid` exists (a zombie included); false for anything that names no single process. */
export function processExists(pid: number): boolean {
  if (!isProcessId(pid)) return false;
  try {
    return send(pid, 0);
  } catch {
    return true; // EPERM: it exists, but is not ours to signal
  }
}

/** Whether process group `pgid` has a process left; false for anything that names no single group. */
export function processGroupExists(pgid: number): boolean {
  if (!isProcessId(pgid)) return false;
  try {
    return send(-pgid, 0);
  } catch {
    return true;
  }
}

/**
 * When process `pid` started, in clock ticks since boot (field 22 of /proc/<pid>/stat): with
 * its PID, what names one process for good, since Linux reuses PIDs. Undefined when it is
 * gone, or a zombie (done, waiting to be reaped).
 */
export function processStartTicks(pid: number): number | undefined {
  if (!isProcessId(pid)) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[0] === 'Z' ? undefined : Number(fields[19]);
  } catch {
    return undefined;
  }
}

/** Whether `pid` still runs and is the process that started at `startTicks` (0: not known, any process of that PID). */
export function isRunningProcess(pid: number, startTicks: number): boolean {
  const now = processStartTicks(pid);
  return now !== undefined && (startTicks === 0 || now === startTicks);
}

/**
 * Resolves once none of `pids` runs any longer (gone or a zombie), or after `timeoutMs`,
 * with the ones still running then. A SIGKILL takes effect later than it is sent: a caller
 * that judges what is left looks once the killed are gone.
 */
export async function stoppedRunning(pids: readonly number[], timeoutMs: number): Promise<number[]> {
  const deadline = performance.now() + timeoutMs;
  let running = pids.filter((pid) => processStartTicks(pid) !== undefined);
  while (running.length > 0 && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    running = running.filter((pid) => processStartTicks(pid) !== undefined);
  }
  return running;
}

/**
 * Sends `signal` to group `pgid` only while it is the group that was recorded: its leader
 * still the process that started at `startTicks`, or, the leader gone, what is left of its
 * group (Linux gives no new process a PID while a group of that ID has members). A PID
 * since given to another process is left alone, and so is any process of that PID when
 * the leader's start was not known (`undefined`). False when nothing was signalled.
 */
export function signalRecordedGroup(pgid: number, startTicks: number | undefined, signal: NodeJS.Signals): boolean {
  const leader = processStartTicks(pgid);
  if (leader !== undefined && leader !== startTicks) return false;
  return signalProcessGroup(pgid, signal);
}
