import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readlinkSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import {
  findOutputHolders,
  killOutputHolders,
  liveProcessesOfGroup,
  outputEndsOf,
  parentEndsOf,
  peerSocketsOf,
} from './output-holders.js';

/**
 * Who still holds a plugin's output, found through /proc: a child started in a group of its
 * own (as a plugin's leftover daemon would be) with its stdout and stderr the streams node
 * gives it, which are unix socketpairs, not pipes.
 */

let child: ChildProcess | undefined;
afterEach(async () => {
  if (child && child.exitCode === null && child.signalCode === null) {
    const gone = new Promise((resolve) => child!.once('exit', resolve));
    child.kill('SIGKILL');
    await gone;
  }
  child = undefined;
});

async function startHolder(): Promise<ChildProcess & { pid: number }> {
  child = spawn('/bin/sleep', ['60'], { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  await new Promise((resolve, reject) => child!.once('spawn', resolve).once('error', reject));
  return child as ChildProcess & { pid: number };
}

const exitOf = (c: ChildProcess) =>
  new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    c.once('exit', (code, signal) => resolve([code, signal])),
  );

describe("a plugin's output ends", () => {
  it("are read from the child's fds 1 and 2, and this process's own ends are others of the same sockets", async () => {
    const holder = await startHolder();
    const ends = outputEndsOf(holder.pid);
    expect(ends).toEqual([
      { id: expect.stringMatching(/^socket:\[[0-9]+\]$/), of: 'stdout' },
      { id: expect.stringMatching(/^socket:\[[0-9]+\]$/), of: 'stderr' },
    ]);
    const ours = parentEndsOf([holder.stdout, holder.stderr]);
    expect(ours.map((e) => e.of)).toEqual(['stdout', 'stderr']);
    expect(ours.map((e) => e.id)).not.toEqual(ends.map((e) => e.id));
    expect(parentEndsOf([null, undefined])).toEqual([]);
    expect(outputEndsOf(2 ** 22 + 1)).toEqual([]);
  });

  it.skipIf(!existsSync('/usr/bin/ss') && !existsSync('/bin/ss') && !existsSync('/usr/sbin/ss'))(
    "are the peers the kernel's socket diagnostics (ss) name for this process's ends",
    async () => {
      const holder = await startHolder();
      // In the order ss lists the sockets.
      const peers = peerSocketsOf(parentEndsOf([holder.stdout, holder.stderr]));
      expect(peers.sort((a, b) => a.of.localeCompare(b.of))).toEqual(outputEndsOf(holder.pid).reverse());
      expect(peerSocketsOf([{ id: 'pipe:[12]', of: 'stdout' }])).toEqual([]);
    },
  );
});

describe('the holders of those ends', () => {
  it('name the process and its executable once for each output it holds, and SIGKILL it once', async () => {
    const holder = await startHolder();
    const holders = findOutputHolders(outputEndsOf(holder.pid));
    const sleep = readlinkSync(`/proc/${holder.pid}/exe`);
    expect(holders).toEqual([
      { pid: holder.pid, command: sleep, holds: 'stdout' },
      { pid: holder.pid, command: sleep, holds: 'stderr' },
    ]);
    const exited = exitOf(holder);
    killOutputHolders(holders);
    expect(await exited).toEqual([null, 'SIGKILL']);
    expect(findOutputHolders([])).toEqual([]);
  });

  it('are never this process nor those that started it, which hold the same ends', () => {
    const ourStdout = readlinkSync('/proc/self/fd/1');
    const pids = findOutputHolders([{ id: ourStdout, of: 'stdout' }]).map((h) => h.pid);
    expect(pids).not.toContain(process.pid);
    expect(pids).not.toContain(process.ppid);
  });
});

describe('what a plugin left running in its group', () => {
  it('is each live process of the group with its executable, and nothing once it is gone', async () => {
    const holder = await startHolder();
    expect(liveProcessesOfGroup(holder.pid)).toEqual([
      { pid: holder.pid, command: readlinkSync(`/proc/${holder.pid}/exe`) },
    ]);
    const exited = exitOf(holder);
    holder.kill('SIGKILL');
    await exited;
    expect(liveProcessesOfGroup(holder.pid)).toEqual([]);
  });
});
