import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
// @ts-expect-error: plain JavaScript without types, run by node in `npm run bench`
import * as scratch from '../bench/scratch.mjs';
import { tempDir, removeTempDir, root, skipUnless } from './support/kit.js';

const SCRATCH = fileURLToPath(new URL('../bench/scratch.mjs', import.meta.url));
const mounted = (path: string) => readFileSync('/proc/self/mountinfo', 'utf8').includes(` ${path} `);

/** A benchmark run in a process of its own, journaling into `journal`: it makes one scratch folder under `base`, says it, and waits. */
async function benchmarkRun(base: string, journal: string): Promise<{ child: ChildProcess; dir: string }> {
  const code = `import { makeScratch } from ${JSON.stringify(SCRATCH)};
const dir = await makeScratch('restore', ${JSON.stringify(base)});
process.stdout.write(dir + '\\n');
setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', code], {
    env: { ...process.env, DHV_CLEANUP_JOURNAL: journal },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const dir = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      if (out.endsWith('\n')) resolve(out.trim());
    });
    child.once('exit', (code) => reject(new Error(`the benchmark run exited (${code}) before making its folder`)));
  });
  return { child, dir };
}

function killOutright(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

describe("the benchmarks' scratch folders", () => {
  let base: string;
  let journal: string;
  const runs: ChildProcess[] = [];
  beforeEach(async () => {
    base = await tempDir('bench-scratch');
    journal = join(base, 'journal');
  });
  afterEach(async () => {
    for (const child of runs.splice(0))
      if (child.exitCode === null && child.signalCode === null) await killOutright(child);
    await removeTempDir(base);
  });

  it("are recorded in this process's cleanup journal before they exist, and removed whole", async () => {
    const dir: string = await scratch.makeScratch('unit', base);
    expect(basename(dir)).toMatch(/^dhv-bench-unit-[A-Za-z0-9]{8}$/);
    await writeFile(join(dir, 'file'), 'x');
    await scratch.removeScratch(dir);
    expect(existsSync(dir)).toBe(false);
  });

  /** Kills `dead` outright, then sweeps as the next benchmark run's start does; returns what the sweep said. */
  async function sweepAfterKilling(dead: ChildProcess): Promise<string[]> {
    await killOutright(dead);
    process.env.DHV_CLEANUP_JOURNAL = journal;
    try {
      return await scratch.sweepDeadScratch();
    } finally {
      delete process.env.DHV_CLEANUP_JOURNAL;
    }
  }

  it("removes the folders of a run killed outright at the next run's start, and only those", async () => {
    const dead = await benchmarkRun(base, journal);
    const running = await benchmarkRun(base, journal);
    runs.push(dead.child, running.child);
    const foreign = join(base, 'dhv-bench-somebody-else');
    await mkdir(foreign);
    await writeFile(join(dead.dir, 'volume'), 'x');
    expect(await sweepAfterKilling(dead.child)).toEqual([expect.stringContaining(`removed ${dead.dir}`)]);
    expect([existsSync(dead.dir), existsSync(running.dir), existsSync(foreign)]).toEqual([false, true, true]);
    expect(await readdir(journal)).toHaveLength(1);
  });

  it.skipIf(skipUnless('unmounting what a killed benchmark left mounted', root()))(
    'unmounts what is mounted below such a folder before removing it',
    async () => {
      const dead = await benchmarkRun(base, journal);
      runs.push(dead.child);
      const volume = join(dead.dir, 'volumes', 'v');
      await mkdir(volume, { recursive: true });
      expect(spawnSync('/usr/bin/mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', volume]).status).toBe(0);
      try {
        expect(await sweepAfterKilling(dead.child)).toEqual([expect.stringContaining(`removed ${dead.dir}`)]);
        expect(mounted(volume)).toBe(false);
        expect(existsSync(dead.dir)).toBe(false);
      } finally {
        if (mounted(volume)) spawnSync('/usr/bin/umount', ['-l', volume]);
      }
    },
  );
});
