import { readFileSync } from 'node:fs';
import { lockHolderPid } from '@dhv/sdk';
import { readSmallRegularFileSync } from './durable-file.js';

// What a waiter for the agent learns of the processes ahead of it, for its message and to pass a stopped one.

/** The PID a lock's exclusive holder wrote into the lock file, or undefined. */
export function lockHolder(path: string): number | undefined {
  try {
    return lockHolderPid(readSmallRegularFileSync(path));
  } catch {
    return undefined;
  }
}

/** A process's command line as `dhv <args>` (its node and script paths left out). */
export function commandOf(pid: number): string {
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    return ['dhv', ...argv.slice(2)].join(' ').slice(0, 300);
  } catch {
    return 'dhv';
  }
}

/** The one-letter state of a process from /proc (T: stopped), or undefined. */
export function processState(pid: number | undefined): string | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  } catch {
    return undefined;
  }
}
