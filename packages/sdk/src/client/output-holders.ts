import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { signalProcess } from '../helpers/signals.js';
import { findTool, TOOL_ENV } from '../helpers/system-tools.js';

/**
 * A plugin can leave a daemon behind in a session of its own (setsid), out of reach of
 * its process group, still holding the plugin's stdout or stderr. Linux names each open
 * file in /proc/<pid>/fd, so whoever still holds those exact pipe ends can be found and
 * killed, whatever group or session it moved to.
 */

/** One end of a plugin's stdout or stderr, by the identity /proc shows for it (`pipe:[inode]`, `socket:[inode]`). */
export interface OutputEnd {
  id: string;
  of: 'stdout' | 'stderr';
}

/** A process that still held a plugin's stdout or stderr, as /proc names it. */
export interface OutputHolder {
  pid: number;
  /** Its executable (/proc/<pid>/exe), or `?` where that cannot be read. */
  command: string;
  holds: 'stdout' | 'stderr';
}

/** The ends of a just-started child's stdout and stderr, as the child holds them. */
export function outputEndsOf(pid: number): OutputEnd[] {
  const ends: OutputEnd[] = [];
  for (const [fd, of] of [
    [1, 'stdout'],
    [2, 'stderr'],
  ] as const) {
    try {
      ends.push({ id: readlinkSync(`/proc/${pid}/fd/${fd}`), of });
    } catch {
      // Not on Linux, or the child already exited: nothing can hold its output then.
    }
  }
  return ends;
}

/**
 * Every process that holds one of `ends` open, other than this one and those that started
 * it (a plugin's leftover never is one of them): one entry for each output it holds.
 */
export function findOutputHolders(ends: readonly OutputEnd[]): OutputHolder[] {
  if (ends.length === 0) return [];
  const wanted = new Map<string, OutputEnd['of']>(ends.map((e) => [e.id, e.of]));
  const spared = ancestorsOfThisProcess();
  const found: OutputHolder[] = [];
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^[0-9]+$/.test(name));
  } catch {
    return found;
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
    const holds = new Set<OutputEnd['of']>();
    for (const fd of fds) {
      try {
        const of = wanted.get(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (of) holds.add(of);
      } catch {
        // closed meanwhile
      }
    }
    if (holds.size === 0) continue;
    let command = '?';
    try {
      command = readlinkSync(`/proc/${pid}/exe`);
    } catch {
      // a zombie, or not ours to look at
    }
    for (const of of ['stdout', 'stderr'] as const) if (holds.has(of)) found.push({ pid, command, holds: of });
  }
  return found;
}

/** SIGKILLs each of `holders` (a PID named twice is killed once). */
export function killOutputHolders(holders: readonly OutputHolder[]): void {
  for (const pid of new Set(holders.map((h) => h.pid))) signalProcess(pid, 'SIGKILL');
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
export function parentEndsOf(streams: readonly [stdout: unknown, stderr: unknown]): OutputEnd[] {
  const ends: OutputEnd[] = [];
  for (const [stream, of] of [
    [streams[0], 'stdout'],
    [streams[1], 'stderr'],
  ] as const) {
    const fd = (stream as { _handle?: { fd?: unknown } } | null)?._handle?.fd;
    if (typeof fd !== 'number' || fd < 0) continue;
    try {
      ends.push({ id: readlinkSync(`/proc/self/fd/${fd}`), of });
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
export function peerSocketsOf(ends: readonly OutputEnd[]): OutputEnd[] {
  const inodes = new Map<string, OutputEnd['of']>();
  for (const e of ends) {
    const inode = /^socket:\[([0-9]+)\]$/.exec(e.id)?.[1];
    if (inode !== undefined) inodes.set(inode, e.of);
  }
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
  const peers: OutputEnd[] = [];
  for (const line of table.split('\n')) {
    // Netid State Recv-Q Send-Q Local-Address Port Peer-Address Port: an unnamed socket's address is "*", its port its inode.
    const m = /\s([0-9]+)\s+\S+\s+([0-9]+)\s*$/.exec(line);
    const of = m ? inodes.get(m[1]!) : undefined;
    if (m && of && m[2] !== '0') peers.push({ id: `socket:[${m[2]}]`, of });
  }
  return peers;
}

/** A process of a plugin's own group that was still running when the plugin had exited. */
export interface LeftRunning {
  pid: number;
  /** Its executable (/proc/<pid>/exe), or `?` where that cannot be read. */
  command: string;
}

/**
 * The live processes of process group `pgid` (zombies, which are done, left out): what a
 * plugin that has exited left running in its group. Read from /proc/<pid>/stat (proc(5):
 * the state and the group follow the parenthesised command).
 */
export function liveProcessesOfGroup(pgid: number): LeftRunning[] {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^[0-9]+$/.test(name));
  } catch {
    return [];
  }
  const found: LeftRunning[] = [];
  for (const name of pids) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    const [state, , group] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (state === 'Z' || Number(group) !== pgid) continue;
    let command = '?';
    try {
      command = readlinkSync(`/proc/${name}/exe`);
    } catch {
      // not ours to look at, or exiting
    }
    found.push({ pid: Number(name), command });
  }
  return found;
}
