import { existsSync } from 'node:fs';
import { chmod, copyFile, mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { SUITE_TIMEOUT_MS, failedRequired, runCheck } from './support/check-cli.js';
import { REPO_ROOT, removeTempDir, tempDir } from './support/kit.js';
import { killAll, recordedPids, survivors } from './support/processes.js';
import type { ConformanceReport } from '../packages/harness/src/conformance/index.js';

const FIXTURES = join(REPO_ROOT, 'test/fixtures/check-space');
const MiB = 1024n * 1024n;
/** What the docs promise a sandbox may take beyond its volumes' capacities. */
const SLACK = 64n * MiB;

type OnFinished = (fn: () => Promise<void>) => void;

/** A copy of the fixture in a folder of the test's own, with the scratch dir `dhv check` makes its sandbox in. */
async function setUp(fixture: string, onTestFinished: OnFinished): Promise<{ plugin: string; scratch: string }> {
  const dir = await tempDir('space');
  const plugin = join(dir, 'plugin');
  onTestFinished(async () => {
    killAll(await recordedPids(`${plugin}.pids`));
    await removeTempDir(dir);
  });
  await copyFile(join(FIXTURES, fixture), plugin);
  await chmod(plugin, 0o755);
  const scratch = join(dir, 'scratch');
  await mkdir(scratch);
  return { plugin, scratch };
}

describe.concurrent('dhv check holds a plugin to the space it asks for', () => {
  test(
    'with --capacity-max 64MiB, no create asks for more, and no sandbox grows past 64 MiB plus 64 MiB a volume',
    async ({ onTestFinished }) => {
      const { plugin, scratch } = await setUp('reserves-space.sh', onTestFinished);
      const { code, stdout } = await runCheck([
        plugin,
        '--json',
        '--capacity-max',
        '64MiB',
        '--volumes-dir',
        scratch,
        '--explore-budget',
        '2',
      ]);
      const report = JSON.parse(stdout) as ConformanceReport;
      const lines = (await readFile(`${plugin}.log`, 'utf8')).trim().split('\n');
      const asked = lines.map((line) => line.split(' ')).map(([, , min, max]) => [BigInt(min!), BigInt(max!)]);
      expect(asked.length).toBeGreaterThan(20);
      // Every capacity any check asked for lies within --capacity-max: the plugin never had to refuse one.
      expect(lines.filter((l) => l.endsWith(' refused'))).toEqual([]);
      expect(asked.filter(([min, max]) => min! > 64n * MiB || max! > 64n * MiB)).toEqual([]);
      // Each sandbox, measured by the plugin right after it reserved its space, within the documented
      // bound: 64 MiB plus 64 MiB for each volume asked for in it.
      const volumesBySandbox = new Map<string, Set<string>>();
      for (const [sandbox, volumeId] of lines.map((line) => line.split(' ')))
        volumesBySandbox.set(sandbox!, (volumesBySandbox.get(sandbox!) ?? new Set<string>()).add(volumeId!));
      const past = lines.filter((line) => {
        const [sandbox, , , , taken] = line.split(' ');
        return BigInt(taken!) > SLACK + 64n * MiB * BigInt(volumesBySandbox.get(sandbox!)!.size);
      });
      expect(past).toEqual([]);
      expect(failedRequired(report)).toEqual([]);
      expect(report.results.find((r) => r.id === 'safety.space-within-bound')?.status).toBe('pass');
      expect(code).toBe(0);
      expect(await readdir(scratch)).toEqual([]);
    },
    SUITE_TIMEOUT_MS,
  );

  test(
    'a plugin that writes past what it was asked for is stopped, and failed with what it wrote and where',
    async ({ onTestFinished }) => {
      const { plugin, scratch } = await setUp('writes-without-limit.sh', onTestFinished);
      const { code, stdout } = await runCheck([
        plugin,
        '--json',
        '--only',
        'create.path',
        '--capacity-max',
        '64MiB',
        '--volumes-dir',
        scratch,
      ]);
      const report = JSON.parse(stdout) as ConformanceReport;
      const space = report.results.find((r) => r.id === 'safety.space-within-bound');
      expect(space?.status).toBe('fail');
      expect(space?.severity).toBe('required');
      // What it wrote (the size), where (the sandbox and the largest file), and the bound.
      expect(space?.reason).toMatch(/^the create of create\.path was stopped: the sandbox \S+01-create\.path took /);
      expect(space?.reason).toMatch(/\/volumes\/[0-9a-f-]{36}\/fill \(\d+ MiB\)/);
      expect(space?.reason).toContain('past its bound of 128 MiB (134217728 bytes)');
      expect(report.results.find((r) => r.id === 'create.path')?.status).toBe('fail');
      expect(code).toBe(1);
      // Stopped: it never got past its wait, and no process of it is left.
      expect(existsSync(`${plugin}.log`)).toBe(false);
      const pids = await recordedPids(`${plugin}.pids`);
      expect(pids.length).toBeGreaterThan(0);
      expect(await survivors(pids)).toEqual([]);
      expect(await readdir(scratch)).toEqual([]);
    },
    SUITE_TIMEOUT_MS,
  );
});
