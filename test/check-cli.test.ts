import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { CATALOGUE } from '@dhv/harness';
import { runCheck } from './support/check-cli.js';
import { HARNESS_FIXTURES as FIXTURES, removeTempDir, tempDir } from './support/kit.js';

const dhv = (args: string[]) => runCheck(args);

let scratch: string;
beforeEach(async () => {
  scratch = await tempDir('check-cli');
});
afterEach(async () => {
  await removeTempDir(scratch);
});

describe('dhv check, the command', () => {
  test('--junit writes JUnit XML with a testcase per check beside the human table', async () => {
    const junit = join(scratch, 'report.xml');
    const volumes = join(scratch, 'volumes');
    const { code, stdout } = await dhv([
      join(FIXTURES, 'missing-version'),
      '--junit',
      junit,
      '--volumes-dir',
      volumes,
      '--only',
      'discovery',
    ]);
    expect(code).toBe(1);
    expect(stdout).toMatch(/^FAIL {2}discovery\.version-present/m);
    expect(stdout).toMatch(/^FAILED: required checks failed: discovery\.version-present$/m);
    const xml = await readFile(junit, 'utf8');
    expect(xml.match(/<testcase /g)).toHaveLength(CATALOGUE.filter((c) => c.area === 'discovery').length);
    expect(xml).toMatch(
      /<testcase classname="dhv.discovery" name="discovery.version-present"[^>]*>\s*<properties>.*<\/properties>\s*<failure /s,
    );
    expect(await readdir(volumes)).toEqual([]);
  });

  test('--only and --skip take areas and IDs, comma-separated or repeated; --param and sizes reach the report', async () => {
    const { code, stdout } = await dhv([
      join(FIXTURES, 'good-plugin'),
      '--json',
      '--only',
      'delete,errors.unknown-operation',
      '--skip',
      'delete.leaves-nothing',
      '--capacity-min',
      '1MiB',
      '--capacity-max',
      '2MB',
      '--repeat',
      '2',
      '--volumes-dir',
      scratch,
    ]);
    expect(code).toBe(0);
    const report = JSON.parse(stdout);
    // In the catalogue's order, whatever the order given.
    const selected = CATALOGUE.filter(
      (c) => (c.area === 'delete' || c.id === 'errors.unknown-operation') && c.id !== 'delete.leaves-nothing',
    );
    expect(report.results.map((r: { id: string }) => r.id)).toEqual(selected.map((c) => c.id));
    expect(report.settings).toEqual({
      repeat: 2,
      parameters: null,
      capacityMin: '1048576',
      capacityMax: '2000000',
      expansionSize: '0',
      supports: [],
    });
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
    const list = JSON.parse(stdout);
    expect(list).toMatchObject({ apiVersion: 'dhv/v1', kind: 'CheckList' });
    const checks = list.checks as Array<{
      id: string;
      area: string;
      severity: string;
      gradeReason: string;
      title: string;
      protocolRef: string;
    }>;
    const fields = ({ id, area, severity, title, protocolRef, gradeReason }: (typeof checks)[number]) => ({
      id,
      area,
      severity,
      title,
      protocolRef,
      gradeReason,
    });
    expect(checks.map(fields)).toEqual(CATALOGUE.map(fields));
    for (const c of checks) {
      expect(c.id.startsWith(`${c.area}.`), c.id).toBe(true);
      expect(c.title).toMatch(/\.$/);
      expect(c.protocolRef).toMatch(/^PROTOCOL\.md § /);
      expect(['required', 'recommended']).toContain(c.severity);
      expect(c.gradeReason.length).toBeGreaterThan(20);
    }
  });

  test('--config reads parameters, sizes and setup/teardown from HCL; flags override it', async () => {
    const config = join(scratch, 'check.hcl');
    const volumes = join(scratch, 'volumes');
    await writeFile(
      config,
      [
        'capacity_min = "1MiB"',
        'capacity_max = "4MiB"',
        'expansion_size = "2MiB"',
        'repeat = 2',
        'supports = ["expansion"]',
        'setup = ["echo up > setup.log"]',
        'teardown = ["echo down >> setup.log"]',
      ].join('\n'),
    );
    const only = ['--only', 'create.bytes-within-capacity,create.expands', '--volumes-dir', volumes];
    const lenient = await dhv([
      join(FIXTURES, 'good-plugin'),
      '--json',
      '--config',
      config,
      '--capacity-max',
      '2MiB',
      ...only,
    ]);
    expect(lenient.code).toBe(0);
    const report = JSON.parse(lenient.stdout);
    expect(report.settings).toEqual({
      repeat: 2,
      parameters: null,
      capacityMin: '1048576',
      capacityMax: '2097152',
      expansionSize: '2097152',
      supports: ['expansion'],
    });
    expect(await readFile(join(scratch, 'setup.log'), 'utf8')).toBe('up\ndown\n');
    // good-plugin reports 0 bytes, so create.bytes-within-capacity cannot judge it: a recommended skip, not a failure.
    expect(report.results.map((r: { status: string }) => r.status)).toEqual(['skip', 'skip']);
    const missing = await dhv([join(FIXTURES, 'good-plugin'), '--config', join(scratch, 'nope.hcl')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('nope.hcl');
    const unknown = join(scratch, 'bad.hcl');
    await writeFile(unknown, 'capacity = "1MiB"\n');
    expect((await dhv([join(FIXTURES, 'good-plugin'), '--config', unknown])).stderr).toContain(
      'unknown setting "capacity"',
    );
    await writeFile(unknown, 'supports = ["shrinking"]\n');
    const feature = await dhv([join(FIXTURES, 'good-plugin'), '--config', unknown]);
    expect(feature.code).toBe(2);
    expect(feature.stderr).toContain('supports: "shrinking" is not a feature dhv check knows; known: expansion');
  });

  test('a required check that skips is shown as such, and --strict turns it into a failed run', async () => {
    // needs-home's create fails without HOME, so create.bytes (required) cannot judge what it reports: it skips.
    const args = [join(FIXTURES, 'needs-home'), '--only', 'create.bytes', '--volumes-dir', join(scratch, 'volumes')];
    const plain = await dhv(args);
    expect(plain.code).toBe(0);
    expect(plain.stdout).toMatch(/SKIP {2}create\.bytes .*\(required: not judged\)/);
    expect(plain.stdout).toContain(
      'OK: no required check failed, but 1 required check was skipped (create.bytes); --strict fails the run on that',
    );
    const strict = await dhv([...args, '--strict']);
    expect(strict.code).toBe(1);
    expect(strict.stdout).toMatch(/SKIP {2}create\.bytes .*\(required: fails under --strict\)/);
    expect(strict.stdout).toContain('FAILED (--strict)');
  });

  test('--help describes the command and its flags', async () => {
    const { code, stdout } = await dhv(['--help']);
    expect(code).toBe(0);
    for (const flag of [
      '--only',
      '--skip',
      '--repeat',
      '--volumes-dir',
      '--param',
      '--capacity-min',
      '--capacity-max',
      '--json',
      '--junit',
      '--jobs',
      '--strict',
      '--config',
      '--expansion-size',
    ]) {
      expect(stdout).toContain(flag);
    }
  });
});
