import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { crowding, crowdedWords, type Crowding } from './crowded-table.js';
import { loopDevices, skipUnless, tool } from '../../../../../test/support/kit.js';

const asRoot = process.getuid?.() === 0;
const mountsOf = async () => (await readFile('/proc/self/mountinfo', 'utf8')).split('\n').filter(Boolean);
const run = async (crowded: Crowding, argv: string[], cwd?: string) =>
  (await promisify(execFile)(crowded.executable, argv, { env: { DHV_OPERATION: 'create' }, cwd })).stdout;

describe('a crowded mount table', () => {
  let dir = '';
  let made: Crowding | undefined;
  afterEach(async () => {
    await made?.end();
    made = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  it.skipIf(!asRoot)(
    "runs the program with its argv, environment and directory alone, under the host's mounts and hundreds more, and leaves the host's table as it was",
    async () => {
      dir = await mkdtemp(join(tmpdir(), 'dhv-crowded-'));
      made = (await crowding(join(dir, 'env'), '/usr/bin/env'))!;
      expect(await run(made, [])).toBe('DHV_OPERATION=create\n');
      const shell = (await crowding(join(dir, 'sh'), '/bin/sh'))!;
      try {
        expect(await run(shell, ['-c', 'echo "$0 $1"; pwd', 'create', 'x'], dir)).toBe(`create x\n${dir}\n`);
        const table = await run(shell, ['-c', 'cat /proc/self/mounts']);
        const extra = table.split('\n').filter((line) => line.includes(dir));
        expect(extra.length).toBe(shell.extraMounts);
        expect(shell.extraMounts).toBeGreaterThan(300);
        // Past a pipe's 64 KiB: `mount | grep -q` closes it before `mount` is done.
        expect(shell.tableBytes).toBeGreaterThan(64 * 1024);
        expect((await mountsOf()).filter((line) => line.includes(dir))).toEqual([]);
      } finally {
        await shell.end();
      }
    },
  );

  it.skipIf(!asRoot)('is one namespace for every call until it ends, and nothing of it is left after', async () => {
    dir = await mkdtemp(join(tmpdir(), 'dhv-crowded-'));
    made = (await crowding(dir, '/bin/sh'))!;
    const ns = () => run(made!, ['-c', 'readlink /proc/self/ns/mnt']);
    const first = await ns();
    expect(await ns()).toBe(first);
    expect(first).not.toBe(`${await promisify(execFile)('readlink', ['/proc/self/ns/mnt']).then((r) => r.stdout)}`);
    await made.end();
    await expect(ns()).rejects.toThrow();
    expect((await mountsOf()).filter((line) => line.includes(dir))).toEqual([]);
  });

  it.skipIf(skipUnless('a crowded table beside loop mounts', loopDevices(), tool('mkfs.ext4', 'e2fsprogs')))(
    "holds no copy of the host's loop mounts outside its lab, which would block their deletes while it lives",
    async () => {
      dir = await mkdtemp(join(tmpdir(), 'dhv-crowded-'));
      const exec = promisify(execFile);
      const image = join(dir, 'image');
      await exec('truncate', ['-s', '8M', image]);
      await exec('mkfs.ext4', ['-q', image]);
      const outside = join(dir, 'outside');
      const inside = join(dir, 'lab', 'volumes', 'v');
      await Promise.all([mkdir(outside), mkdir(inside, { recursive: true })]);
      await exec('mount', ['-o', 'loop', image, outside]);
      try {
        await exec('mount', ['--bind', outside, inside]);
        try {
          made = (await crowding(join(dir, 'lab'), '/bin/cat'))!;
          const points = (await run(made, ['/proc/self/mountinfo'])).split('\n').map((line) => line.split(' ')[4]);
          expect(points).toContain(inside);
          expect(points).not.toContain(outside);
        } finally {
          await made?.end();
          await exec('umount', [inside]);
        }
      } finally {
        await exec('umount', [outside]);
      }
    },
  );

  it('is named in a verdict by its size, its mounts and what makes them on a real client', () => {
    expect(crowdedWords({ tableBytes: 70 * 1024 + 100, extraMounts: 410 })).toBe(
      "under a mount table of 70 KiB (410 extra mounts, as the tasks' tmpfs and secrets mounts make on a busy client)",
    );
  });
});
