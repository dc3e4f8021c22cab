import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
// @ts-expect-error: plain JavaScript without types, run by node in `npm run bench`
import * as scratch from '../bench/scratch.mjs';
import { tempDir, removeTempDir, root, skipUnless } from './support/kit.js';

/** A PID no process has: one that has just exited. */
function deadPid(): number {
  return spawnSync('/bin/true').pid!;
}

const mounted = (path: string) => readFileSync('/proc/self/mountinfo', 'utf8').includes(` ${path} `);

describe("the benchmarks' scratch folders", () => {
  let base: string;
  beforeEach(async () => {
    base = await tempDir('bench-scratch');
  });
  afterEach(async () => {
    await removeTempDir(base);
  });

  it('are named with the PID of the run that made them, and removed whole', async () => {
    const dir: string = await scratch.makeScratch('unit', base);
    expect(basename(dir)).toMatch(new RegExp(`^dhv-bench-unit-${process.pid}-[A-Za-z0-9]{6}$`));
    await writeFile(join(dir, 'file'), 'x');
    await scratch.removeScratch(dir);
    expect(existsSync(dir)).toBe(false);
  });

  it("removes the folders of runs that are gone at the next run's start, and only those", async () => {
    const dead = join(base, `dhv-bench-restore-${deadPid()}-AbC123`);
    const running = join(base, `dhv-bench-restore-${process.ppid}-AbC123`);
    const foreign = join(base, 'dhv-bench-somebody-else');
    for (const dir of [dead, running, foreign]) await mkdir(join(dir, 'volumes'), { recursive: true });
    expect(await scratch.sweepDeadScratch([base])).toEqual([dead]);
    expect([existsSync(dead), existsSync(running), existsSync(foreign)]).toEqual([false, true, true]);
  });

  it.skipIf(skipUnless('unmounting what a killed benchmark left mounted', root()))(
    'unmounts what is mounted below a folder before removing it',
    async () => {
      const dir = join(base, `dhv-bench-loopback-${deadPid()}-AbC123`);
      const volume = join(dir, 'volumes', 'v');
      await mkdir(volume, { recursive: true });
      expect(spawnSync('/usr/bin/mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', volume]).status).toBe(0);
      try {
        expect(mounted(volume)).toBe(true);
        expect(await scratch.sweepDeadScratch([base])).toEqual([dir]);
        expect(mounted(volume)).toBe(false);
        expect(existsSync(dir)).toBe(false);
      } finally {
        if (mounted(volume)) spawnSync('/usr/bin/umount', ['-l', volume]);
      }
    },
  );
});
