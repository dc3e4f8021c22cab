import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { findTool } from '@dhv/sdk/plugin';
import { dropLoopMountCopies, shellQuote } from '@dhv/sdk/host';

/**
 * A host condition of a real client: a mount table of many kilobytes (every task's tmpfs and
 * secrets mounts), where a fresh sandbox has a short one. Calls run under it run in a mount
 * namespace of dhv's own, copied from the host's when it is made (the plugin sees its own
 * earlier mounts), to which dhv first adds TASK_MOUNTS tmpfs mounts at long paths inside the
 * check's sandbox, then binds that tree COPIES times over (a few hundred mounts for a few
 * dozen mount calls). The table then outgrows a pipe's 64 KiB, as on a busy client, where a
 * check that reads it through a pipe it closes early (`mount | grep -q`) fails most times.
 * It is made once and every call under it enters it, so a check fooled only some of the time
 * meets many calls at the cost of a few. The host's own table is never touched; the
 * namespace, and every mount in it, ends with end(). As root only: no one else may make mounts.
 */
const TASK_MOUNTS = 40;
const COPIES = 10;
/** The source every one of them is listed with (a bind keeps its tmpfs's). */
const SOURCE = 'dhv-crowd';

const TOOLS = ['unshare', 'nsenter', 'mount', 'umount', 'mkdir', 'env', 'sed'] as const;
type Tools = Record<(typeof TOOLS)[number], string>;

/** Where each tool is, by absolute path (a plugin runs with no PATH); undefined when one is missing. */
function findTools(): Tools | undefined {
  try {
    return Object.fromEntries(TOOLS.map((tool) => [tool, findTool(tool)])) as Tools;
  } catch {
    return undefined;
  }
}

/**
 * The namespace's first process: it drops its copies of the host's loop mounts outside
 * `lab` (they would block the host's deletes while it lives), makes the mounts, says so, and
 * holds the namespace until its stdin closes (end(), or dhv's own end, however it ends).
 * `crowd` is an empty folder of the sandbox; one tmpfs holds the mount points, so nothing
 * is written on the host.
 */
function holder(tools: Tools, lab: string, crowd: string): string {
  const hex = (n: number, width: number) => n.toString(16).padStart(width, '0');
  const tasks = Array.from({ length: TASK_MOUNTS }, (_, i) =>
    shellQuote(`${crowd}/1/alloc/${hex(i, 8)}-5eed-4a11-8c0d-${hex(i, 12)}/task-with-a-long-name-${i}/secrets`),
  );
  const copies = Array.from({ length: COPIES - 1 }, (_, i) => shellQuote(`${crowd}/${i + 2}`));
  return [
    dropLoopMountCopies({ keep: [lab], tools }),
    'set -e',
    `${tools.mount} -t tmpfs -o size=1m ${SOURCE} ${shellQuote(crowd)}`,
    `${tools.mkdir} -p ${[...tasks, ...copies].join(' ')}`,
    ...tasks.map((point) => `${tools.mount} -t tmpfs -o size=64k,noexec,nosuid,nodev ${SOURCE} ${point}`),
    ...copies.map((copy) => `${tools.mount} --rbind ${shellQuote(`${crowd}/1`)} ${copy}`),
    'echo ready',
    'read -r _ || true',
  ].join('\n');
}

/**
 * A program run in the plugin's place, with its argv and environment (nothing added: the
 * shells' own PWD and OLDPWD are taken out), that runs it in the namespace held by `pid`, in the
 * directory it was started in (entering a mount namespace moves a process to its root).
 */
function wrapper(tools: Tools, pid: number, program: string): string {
  return [
    '#!/bin/sh',
    "# dhv check: the call below runs under a crowded mount table, in a mount namespace of dhv's own.",
    `exec ${tools.nsenter} --target ${pid} --mount /bin/sh -c 'cd "$1" && shift && exec ${tools.env} -u PWD -u OLDPWD "$@"' dhv-crowded "$PWD" ${shellQuote(program)} "$@"`,
    '',
  ].join('\n');
}

export interface Crowding {
  /** The program to run in the plugin's place. */
  executable: string;
  /** How many bytes the crowded table prints (/proc/self/mounts, as `mount` lists it), measured once it is made. */
  tableBytes: number;
  /** How many mounts dhv added to it. */
  extraMounts: number;
  /** Ends the namespace and every mount in it; waits until it is gone. */
  end(): Promise<void>;
}

/**
 * Makes the crowded namespace and writes into `dir` (made here) the program that runs
 * `plugin` in it; undefined when it cannot be made here (not root, no unshare or nsenter, a
 * kernel or container that refuses new mount namespaces).
 */
export async function crowding(dir: string, plugin: string): Promise<Crowding | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const tools = findTools();
  if (tools === undefined) return undefined;
  const crowd = join(dir, 'crowd');
  await mkdir(crowd, { recursive: true });
  // A slave of the host's mounts: where they are shared (systemd's default), an unmount on the
  // host takes the namespace's copy with it, and nothing mounted here reaches the host.
  const child = spawn(
    tools.unshare,
    ['--mount', '--propagation', 'slave', '/bin/sh', '-c', holder(tools, dir, crowd)],
    {
      env: {},
      stdio: ['pipe', 'pipe', 'ignore'],
    },
  );
  const end = () => ended(child);
  if (!(await isReady(child)) || child.pid === undefined) return void (await end());
  try {
    const table = await readFile(`/proc/${child.pid}/mounts`, 'utf8');
    const extraMounts = table.split('\n').filter((line) => line.startsWith(`${SOURCE} `)).length;
    const executable = join(dir, 'crowded-plugin');
    await writeFile(executable, wrapper(tools, child.pid, plugin), { mode: 0o755 });
    return { executable, tableBytes: Buffer.byteLength(table), extraMounts, end };
  } catch (err) {
    await end();
    throw err;
  }
}

/** Whether a crowded namespace can be made here: one is made, then ended. */
export async function canCrowd(dir: string, plugin: string): Promise<boolean> {
  const made = await crowding(dir, plugin);
  await made?.end();
  return made !== undefined;
}

/** Whether the holder made its mounts: it says "ready", or it ends (a mount refused) first. */
async function isReady(child: ChildProcess): Promise<boolean> {
  let said = '';
  child.stdout!.setEncoding('utf8');
  return new Promise((resolve) => {
    child.stdout!.on('data', (chunk: string) => {
      said += chunk;
      if (said.includes('ready\n')) resolve(true);
    });
    child.once('error', () => resolve(false));
    child.once('exit', () => resolve(false));
  });
}

async function ended(child: ChildProcess): Promise<void> {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exit = once(child, 'exit');
  child.stdin!.end();
  await exit;
}

/** The condition, as a verdict names it. */
export function crowdedWords({ tableBytes, extraMounts }: Pick<Crowding, 'tableBytes' | 'extraMounts'>): string {
  return `under a mount table of ${Math.round(tableBytes / 1024)} KiB (${extraMounts} extra mounts, as the tasks' tmpfs and secrets mounts make on a busy client)`;
}
