import { readdirSync, readlinkSync } from 'node:fs';

/**
 * A plugin can leave a daemon behind in a session of its own (setsid), out of reach of
 * its process group, still holding the plugin's stdout or stderr. Linux names each open
 * file in /proc/<pid>/fd, so whoever still holds those exact pipe ends can be found and
 * killed, whatever group or session it moved to.
 */

/** The identities (`socket:[inode]` or `pipe:[inode]`) of a just-started child's stdout and stderr. */
export function outputEndsOf(pid: number): string[] {
  const ends: string[] = [];
  for (const fd of [1, 2]) {
    try {
      ends.push(readlinkSync(`/proc/${pid}/fd/${fd}`));
    } catch {
      // Not on Linux, or the child already exited: nothing can hold its output then.
    }
  }
  return ends;
}

/** SIGKILLs every process (other than this one) that holds one of `ends` open; returns their PIDs. */
export function killOutputHolders(ends: readonly string[]): number[] {
  if (ends.length === 0) return [];
  const wanted = new Set(ends);
  const killed: number[] = [];
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^[0-9]+$/.test(name));
  } catch {
    return killed;
  }
  for (const name of pids) {
    const pid = Number(name);
    if (pid === process.pid) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue; // gone, or not ours to look at
    }
    const holds = fds.some((fd) => {
      try {
        return wanted.has(readlinkSync(`/proc/${pid}/fd/${fd}`));
      } catch {
        return false;
      }
    });
    if (!holds) continue;
    try {
      process.kill(pid, 'SIGKILL');
      killed.push(pid);
    } catch {
      // exited meanwhile
    }
  }
  return killed;
}
