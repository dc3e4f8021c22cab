import { existsSync } from 'node:fs';
import { chmod, copyFile, mkdir, readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
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
async function setUp(
  fixture: string,
  onTestFinished: OnFinished,
  name = 'plugin',
): Promise<{ dir: string; plugin: string; scratch: string }> {
  const dir = await tempDir('host-safety');
  const plugin = join(dir, name);
  onTestFinished(async () => {
    killAll(await recordedPids(`${plugin}.pids`));
    await removeTempDir(dir);
  });
  await copyFile(join(FIXTURES, fixture), plugin);
  await chmod(plugin, 0o755);
  const scratch = join(dir, 'scratch');
  await mkdir(scratch);
  return { dir, plugin, scratch };
}

/** Every file below `dir`, relative. */
async function filesBelow(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => !e.isDirectory()).map((e) => relative(dir, join(e.parentPath, e.name)));
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
        '--runs',
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

describe.concurrent('dhv check writes only inside its sandbox', () => {
  for (const name of ['plugin', 'plugin-link'])
    test(
      `a volume path outside the sandbox (${name === 'plugin' ? 'answered as it is' : 'through a link inside the volumes dir'}) is read, never written`,
      async ({ onTestFinished }) => {
        const { dir, plugin, scratch } = await setUp('answers-outside.sh', onTestFinished, name);
        const { stdout } = await runCheck([plugin, '--json', '--volumes-dir', scratch, '--runs', '2']);
        const report = JSON.parse(stdout) as ConformanceReport;
        // The plugin made its volumes there; dhv check put nothing into them.
        expect((await readdir(join(dir, 'outside'))).length).toBeGreaterThan(5);
        expect(await filesBelow(join(dir, 'outside'))).toEqual([]);
        // The checks that would have written into the volume say why they could not judge it.
        const idempotent = report.results.find((r) => r.id === 'create.idempotent');
        expect(idempotent?.status).toBe('skip');
        expect(idempotent?.reason).toMatch(/lies outside dhv check's sandbox .*never writes outside its sandbox/);
        expect(report.results.find((r) => r.id === 'create.restore-in-use')?.status).toBe('skip');
        expect(await readdir(scratch)).toEqual([]);
      },
      SUITE_TIMEOUT_MS,
    );
});
