import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, test as vitestTest } from 'vitest';
import { SUITE_TIMEOUT_MS, dhvCheck, failedRequired, runCheck } from './support/check-cli.js';
import { removeTempDir, tempDir, DHV_BIN as DHV, HARNESS_FIXTURES as FIXTURES } from './support/kit.js';

/** `dhv check` as CI runs it: stdout and stderr are pipes. */
const dhv = (args: string[]) => runCheck(args);

/** `test` with a scratch dir of its own, removed after it, so the tests run side by side. */
const test = vitestTest.extend<{ scratch: string }>({
  // vitest reads the fixtures a test needs from this first parameter's destructuring.
  // eslint-disable-next-line no-empty-pattern
  scratch: async ({}, use) => {
    const scratch = await tempDir('check-ci');
    try {
      await use(scratch);
    } finally {
      await removeTempDir(scratch);
    }
  },
});

describe.concurrent('dhv check for CI', () => {
  test('a plugin that does not exist is one error line, one JSON error and one JUnit <error>, not a check per line', async ({
    scratch,
  }) => {
    const missing = join(scratch, 'nonexistent');
    const plain = await dhv([missing]);
    expect(plain.code).toBe(1);
    expect(plain.stdout).toBe('');
    expect(plain.stderr).toBe(
      `Error: ${missing} does not exist: give dhv check the path of the plugin executable, e.g. dhv check ./dist/my-plugin\n`,
    );
    const junit = join(scratch, 'report.xml');
    const json = await dhv([missing, '--json', '--junit', junit]);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stderr)).toEqual({
      apiVersion: 'dhv/v1',
      kind: 'Error',
      error: { code: 'PLUGIN_NOT_FOUND', message: expect.stringContaining('does not exist'), plugin: missing },
    });
    const xml = await readFile(junit, 'utf8');
    expect(xml.match(/<testcase /g)).toHaveLength(1);
    expect(xml).toContain(`<error type="PLUGIN_NOT_FOUND" message="${missing} does not exist`);
  });

  test('a plugin that is there but cannot run is one error line with the reason and the fix, shaped as a missing one', async ({
    scratch,
  }) => {
    const plain = join(scratch, 'plugin.sh');
    await writeFile(plain, '#!/bin/sh\necho {}\n');
    await chmod(plain, 0o644);
    const plainRun = await dhv([plain]);
    expect(plainRun.code).toBe(1);
    expect(plainRun.stdout).toBe('');
    expect(plainRun.stderr).toBe(
      `Error: ${plain} cannot be run: it has no execute bit (mode 644); chmod +x ${plain}\n`,
    );

    const badShebang = join(scratch, 'bad-shebang');
    await writeFile(badShebang, '#!/usr/local/bin/no-such-node\n', { mode: 0o755 });
    const junit = join(scratch, 'report.xml');
    const json = await dhv([badShebang, '--json', '--junit', junit]);
    expect(json.code).toBe(1);
    expect(json.stdout).toBe('');
    expect(JSON.parse(json.stderr)).toEqual({
      apiVersion: 'dhv/v1',
      kind: 'Error',
      error: {
        code: 'PLUGIN_NOT_EXECUTABLE',
        message: expect.stringMatching(
          /^\S+ cannot be run: its #! line names \/usr\/local\/bin\/no-such-node, which does not exist on this host \(an agent has no PATH either\); install \/usr\/local\/bin\/no-such-node, or change the #! line/,
        ),
        plugin: badShebang,
        reason:
          'its #! line names /usr/local/bin/no-such-node, which does not exist on this host (an agent has no PATH either)',
      },
    });
    const xml = await readFile(junit, 'utf8');
    expect(xml.match(/<testcase /g)).toHaveLength(1);
    expect(xml).toContain(`<error type="PLUGIN_NOT_EXECUTABLE" message="${badShebang} cannot be run`);

    const folder = join(scratch, 'dist');
    await mkdir(folder);
    const dir = await dhv([folder]);
    expect(dir.code).toBe(1);
    expect(dir.stderr).toBe(
      `Error: ${folder} cannot be run: it is a directory; give dhv check the path of the plugin executable, e.g. dhv check ./dist/my-plugin\n`,
    );
  });

  test('piped, each check is printed when it finishes, not when the run ends', async ({ scratch }) => {
    // slow-answers takes a second over every create and delete: create.path and delete.removes-path take seconds each.
    const child = spawn(
      process.execPath,
      [
        DHV,
        'check',
        join(FIXTURES, 'slow-answers'),
        '--only',
        'discovery.executable,create.path,delete.removes-path',
        '--jobs',
        '1',
        '--volumes-dir',
        scratch,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const seen = new Map<string, number>();
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      for (const m of stdout.matchAll(/^(PASS|FAIL|WARN|SKIP) {2}(\S+)/gm))
        if (!seen.has(m[2]!)) seen.set(m[2]!, performance.now());
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    const ended = performance.now();
    expect(code).toBe(0);
    expect([...seen.keys()]).toEqual(['discovery.executable', 'create.path', 'delete.removes-path']);
    // Two more checks of at least two plugin runs of a second each followed it.
    expect(ended - seen.get('discovery.executable')!).toBeGreaterThan(3_000);
    expect(ended - seen.get('create.path')!).toBeGreaterThan(1_500);
    expect(stdout.trimEnd().split('\n').at(-1)).toBe('OK: no required check failed');
    expect(stdout).not.toMatch(/[\x1b\r]/);
  });

  test('the closing line names the failed checks', async ({ scratch }) => {
    const { code, stdout } = await dhv([
      join(FIXTURES, 'delete-removes-all'),
      '--only',
      'discovery,delete',
      '--volumes-dir',
      scratch,
    ]);
    expect(code).toBe(1);
    expect(stdout.trimEnd().split('\n').at(-1)).toBe(
      'FAILED: required checks failed: delete.cleanup-call, delete.others-untouched; recommended checks failed (warnings): delete.uses-created-path',
    );
  });

  // Alone: what it times is the run's own stop, not the tests beside it.
  test.sequential(
    'a create that leaves a daemon holding stdout is one required failure, found on its first occurrence, and the run ends well within a minute',
    async () => {
      const started = performance.now();
      const { report, exitCode, leftovers } = await dhvCheck(join(FIXTURES, 'daemon-holds-stdout'));
      const took = performance.now() - started;
      expect(took).toBeLessThan(45_000);
      expect(exitCode).toBe(1);
      expect(failedRequired(report)).toEqual(['errors.stdio-released']);
      const failure = report.results.find((r) => r.id === 'errors.stdio-released')!;
      expect(failure.reason).toMatch(
        /^the create of \S+ left process (\d+) \(\S*sleep\) holding its stdout and stderr after it exited: a real agent waits for it as long as it lives/,
      );
      const pid = Number(/left process (\d+)/.exec(failure.reason!)![1]);
      // Killed: gone, or a zombie waiting for its parent.
      const state = existsSync(`/proc/${pid}`) ? await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => ') Z') : ') Z';
      expect(state).toContain(') Z');
      expect(report.stopped).toMatch(/every further operation would wait for it, so \d+ checks were not run$/);
      expect(
        report.results.filter((r) => r.reason === 'not run: the run stopped (see errors.stdio-released)').length,
      ).toBeGreaterThan(10);
      expect(leftovers).toEqual([]);
    },
    60_000,
  );

  test('the daemon is the required failure even when errors.stdio-released is not among the checks run', async () => {
    const { report, exitCode } = await dhvCheck(join(FIXTURES, 'daemon-holds-stdout'), ['--only', 'create']);
    expect(exitCode).toBe(1);
    expect(failedRequired(report)).toEqual(['errors.stdio-released']);
    expect(report.results.at(-1)?.id).toBe('errors.stdio-released');
  });

  test(
    'rm -rf "$DHV_CREATED_PATH" is told what to remove, and a delete written that way passes both cleanup-call and uses-created-path',
    async () => {
      const literal = await dhvCheck(join(FIXTURES, 'docs-literal-delete'), ['--only', 'delete']);
      const cleanup = literal.report.results.find((r) => r.id === 'delete.cleanup-call')!;
      expect(cleanup.status).toBe('fail');
      expect(cleanup.reason).toBe(
        "the cleanup delete destroyed what was not its volume: the volumes dir itself was removed; remove DHV_CREATED_PATH, except when it equals DHV_VOLUMES_DIR (the agent's cleanup delete): then remove DHV_VOLUMES_DIR/DHV_VOLUME_ID",
      );
      const hinted = await dhvCheck(join(FIXTURES, 'created-path-unless-volumes-dir'), ['--only', 'delete']);
      expect(hinted.report.results.map((r) => [r.id, r.status]).filter(([, s]) => s !== 'pass')).toEqual([]);
      expect(hinted.report.results.find((r) => r.id === 'delete.uses-created-path')?.notes).toEqual([
        'removed DHV_CREATED_PATH',
      ]);
    },
    SUITE_TIMEOUT_MS,
  );
});
