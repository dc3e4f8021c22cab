import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { findTool, TOOL_ENV } from '../helpers/system-tools.js';

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

/**
 * SIGKILLs every process that holds one of `ends` open, other than this one and those that
 * started it (a plugin's leftover never is one of them); returns their PIDs.
 */
export function killOutputHolders(ends: readonly string[]): number[] {
  if (ends.length === 0) return [];
  const wanted = new Set(ends);
  const spared = ancestorsOfThisProcess();
  const killed: number[] = [];
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^[0-9]+$/.test(name));
  } catch {
    return killed;
  }
  for (const name of pids) {
    const pid = Number(name);
    if (spared.has(pid)) continue;
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

/** This process and its parent, its parent's parent and so on, from /proc/<pid>/stat. */
function ancestorsOfThisProcess(): Set<number> {
  const line = new Set<number>([process.pid]);
  for (let pid = process.ppid; pid > 0 && !line.has(pid);) {
    line.add(pid);
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      pid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    } catch {
      break;
    }
  }
  return line;
}

/**
 * This process's ends of a child's stdout and stderr. Unlike the child's own ends they
 * can be read at any time: a plugin that forks and exits within a millisecond is gone
 * (its /proc entry empty) before the parent gets to look at it.
 */
export function parentEndsOf(streams: ReadonlyArray<unknown>): string[] {
  const ends: string[] = [];
  for (const stream of streams) {
    const fd = (stream as { _handle?: { fd?: unknown } } | null)?._handle?.fd;
    if (typeof fd !== 'number' || fd < 0) continue;
    try {
      ends.push(readlinkSync(`/proc/self/fd/${fd}`));
    } catch {
      // not on Linux
    }
  }
  return ends;
}

/**
 * The other ends of this process's unix sockets `ends` (libuv gives a child socketpairs
 * as stdio). Only the kernel's socket diagnostics know a socket's peer; `ss` (iproute2)
 * asks them. Without `ss` this returns nothing, and the ends read at spawn are all there is.
 */
export function peerSocketsOf(ends: readonly string[]): string[] {
  const inodes = new Set(
    ends.map((e) => /^socket:\[([0-9]+)\]$/.exec(e)?.[1]).filter((i): i is string => i !== undefined),
  );
  if (inodes.size === 0) return [];
  let table: string;
  try {
    table = execFileSync(findTool('ss', 'iproute2'), ['-x', '-a', '-n', '-H'], {
      env: TOOL_ENV,
      encoding: 'utf8',
      timeout: 2_000,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
  } catch {
    return [];
  }
  const peers: string[] = [];
  for (const line of table.split('\n')) {
    // Netid State Recv-Q Send-Q Local-Address Port Peer-Address Port: an unnamed socket's address is "*", its port its inode.
    const m = /\s([0-9]+)\s+\S+\s+([0-9]+)\s*$/.exec(line);
    if (m && inodes.has(m[1]!) && m[2] !== '0') peers.push(`socket:[${m[2]}]`);
  }
  return peers;
}
