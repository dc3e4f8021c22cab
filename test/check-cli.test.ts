import { execFile } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { DHV, FIXTURES } from './support/check-cli.js';

const exec = promisify(execFile);
const dhv = (args: string[]) =>
  exec(process.execPath, [DHV, 'check', ...args]).then(
    (r) => ({ code: 0, ...r }),
    (err: { code: number; stdout: string; stderr: string }) => ({ code: err.code, stdout: err.stdout, stderr: err.stderr }),
  );

let scratch: string;
beforeEach(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'dhv-check-cli-'));
});
afterEach(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe('dhv check, the command', () => {
  test('--junit writes JUnit XML with a testcase per check beside the human table', async () => {
    const junit = join(scratch, 'report.xml');
    const volumes = join(scratch, 'volumes');
    const { code, stdout } = await dhv([join(FIXTURES, 'missing-version'), '--junit', junit, '--volumes-dir', volumes, '--only', 'discovery']);
    expect(code).toBe(1);
    expect(stdout).toMatch(/^discovery$/m);
    expect(stdout).toMatch(/FAIL {2}discovery\.version-present/);
    expect(stdout).toContain('FAILED: the plugin does not meet the required checks above');
    const xml = await readFile(junit, 'utf8');
    expect(xml.match(/<testcase /g)).toHaveLength(6);
    expect(xml).toMatch(/<testcase classname="dhv.discovery" name="discovery.version-present"[^>]*>\s*<properties>.*<\/properties>\s*<failure /s);
    expect(await readdir(volumes)).toEqual([]);
  });

  test('--only and --skip take areas and IDs, comma-separated or repeated; --param and sizes reach the report', async () => {
    const { code, stdout } = await dhv([
      join(FIXTURES, 'good-plugin'),
      '--json',
      '--only', 'delete,errors.unknown-operation',
      '--skip', 'delete.leaves-nothing',
      '--capacity-min', '1MiB',
      '--capacity-max', '2MB',
      '--repeat', '2',
      '--volumes-dir', scratch,
    ]);
    expect(code).toBe(0);
    const report = JSON.parse(stdout);
    expect(report.results.map((r: { id: string }) => r.id)).toEqual([
      'delete.removes-path',
      'delete.idempotent',
      'delete.never-created',
      'delete.uses-created-path',
      'errors.unknown-operation',
    ]);
    expect(report.settings).toEqual({ repeat: 2, parameters: null, capacityMin: '1048576', capacityMax: '2000000' });
  });

  test('a check name that matches nothing, or a bad size, is a usage error (exit 2) naming it', async () => {
    const typo = await dhv([join(FIXTURES, 'good-plugin'), '--only', 'create.idempotnet']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('no check or area named "create.idempotnet"');
    const size = await dhv([join(FIXTURES, 'good-plugin'), '--capacity-min', 'huge']);
    expect(size.code).toBe(2);
    expect(size.stderr).toContain('capacity-min: invalid size "huge"');
  });

  test('--list --json lists every check with its severity, requirement and protocol reference', async () => {
    const { code, stdout } = await dhv(['--list', '--json']);
    expect(code).toBe(0);
    const checks = JSON.parse(stdout) as Array<{ id: string; severity: string; title: string; protocolRef: string }>;
    expect(checks.length).toBeGreaterThanOrEqual(29);
    for (const c of checks) {
      expect(c.id).toMatch(/^(discovery|environment|create|delete|errors|budgets|safety)\.[a-z-]+$/);
      expect(c.title).toMatch(/\.$/);
      expect(c.protocolRef).toMatch(/^PROTOCOL\.md § /);
      expect(['required', 'recommended']).toContain(c.severity);
    }
  });

  test('--help describes the command and its flags', async () => {
    const { code, stdout } = await dhv(['--help']);
    expect(code).toBe(0);
    for (const flag of ['--only', '--skip', '--repeat', '--volumes-dir', '--param', '--capacity-min', '--capacity-max', '--json', '--junit', '--jobs']) {
      expect(stdout).toContain(flag);
    }
  });
});
