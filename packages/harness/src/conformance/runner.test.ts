import { existsSync } from 'node:fs';
import { chmod, mkdir, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { CATALOGUE } from './catalogue/index.js';
import { runConformance } from './runner.js';
import { formatJUnit } from './report/junit.js';
import { formatHuman } from './report/human.js';
import type { Check, CheckContext } from './types.js';
import { removeTempDir, tempDir } from '../../../../test/support/kit.js';

const GOOD = resolve(import.meta.dirname, '../../fixtures/good-plugin');

let scratch: string;
beforeEach(async () => {
  scratch = await tempDir('runner-test');
});
afterEach(async () => {
  await removeTempDir(scratch);
});

function check(id: string, run: (ctx: CheckContext) => Promise<void>, extra: Partial<Check> = {}): Check {
  return {
    id,
    area: 'create',
    title: `${id} holds.`,
    protocolRef: 'PROTOCOL.md § create',
    severity: 'required',
    gradeReason: 'a test check',
    run,
    ...extra,
  };
}

describe('runConformance', () => {
  test('a check that crashes after creating a volume still has the volume deleted and its sandbox removed', async () => {
    let volumePath = '';
    const report = await runConformance(GOOD, {
      volumesDir: scratch,
      catalogue: [
        check('create.crashes', async (ctx) => {
          volumePath = (await ctx.provision(ctx.newVolume())).path;
          throw new TypeError('the check itself broke');
        }),
      ],
    });
    expect(report.results[0]).toMatchObject({ status: 'fail', reason: 'the check itself broke' });
    expect(volumePath).not.toBe('');
    expect(existsSync(volumePath)).toBe(false);
    expect(await readdir(scratch)).toEqual([]);
  });

  test('a check is skipped, naming the check it needs, when that check failed', async () => {
    const report = await runConformance(GOOD, {
      volumesDir: scratch,
      catalogue: [
        check('create.first', async (ctx) => ctx.fail('broken')),
        check('create.second', async () => {}, { needs: ['create.first'] }),
      ],
    });
    expect(report.results.map((r) => [r.id, r.status, r.reason])).toEqual([
      ['create.first', 'fail', 'broken'],
      ['create.second', 'skip', 'needs create.first, which failed'],
    ]);
    expect(report.ok).toBe(false);
    expect(report.summary).toMatchObject({ fail: 1, skip: 1, requiredFailed: 1 });
  });

  test('a recommended failure or a warning leaves the run ok', async () => {
    const report = await runConformance(GOOD, {
      volumesDir: scratch,
      catalogue: [
        check('create.soft', async (ctx) => ctx.fail('not ideal'), { severity: 'recommended' }),
        check('create.warns', async (ctx) => ctx.warn('slowish')),
      ],
    });
    expect(report.results.map((r) => r.status)).toEqual(['fail', 'warn']);
    expect(report.ok).toBe(true);
  });

  test('--only and --skip take IDs and areas, and refuse names that match nothing', async () => {
    const report = await runConformance(GOOD, {
      volumesDir: scratch,
      only: ['discovery'],
      skip: ['discovery.fingerprint-fast'],
    });
    expect(report.results.map((r) => r.id)).toEqual(
      CATALOGUE.filter((c) => c.area === 'discovery' && c.id !== 'discovery.fingerprint-fast').map((c) => c.id),
    );
    await expect(runConformance(GOOD, { only: ['create.idempotnet'] })).rejects.toMatchObject({
      code: 'UNKNOWN_CHECK',
    });
  });

  test('a plugin that does not exist is one error, before any check or progress event', async () => {
    const events: string[] = [];
    await expect(
      runConformance(join(scratch, 'nope'), {
        volumesDir: scratch,
        onStart: () => events.push('start'),
        onProgress: (e) => events.push(e.kind),
      }),
    ).rejects.toMatchObject({ code: 'PLUGIN_NOT_FOUND', plugin: join(scratch, 'nope') });
    expect(events).toEqual([]);
  });
});

test('checks run several at once, a check marked alone runs by itself, and results keep catalogue order', async () => {
  let running = 0;
  let most = 0;
  const seenAlone: number[] = [];
  const busy =
    (alone = false) =>
    async () => {
      running++;
      most = Math.max(most, running);
      if (alone) seenAlone.push(running);
      await new Promise((r) => setTimeout(r, 30));
      running--;
    };
  const report = await runConformance(GOOD, {
    volumesDir: scratch,
    jobs: 3,
    catalogue: [
      check('create.a', busy()),
      check('create.b', busy()),
      check('create.c', busy()),
      check('create.timed', busy(true), { alone: true }),
      check('create.d', busy()),
      check('create.e', busy(), { needs: ['create.d'] }),
    ],
  });
  expect(report.results.map((r) => r.id)).toEqual([
    'create.a',
    'create.b',
    'create.c',
    'create.timed',
    'create.d',
    'create.e',
  ]);
  expect(most).toBe(3);
  expect(seenAlone).toEqual([1]);
});

test("an interrupted run skips the checks not yet started and still deletes what it made with the plugin's own delete", async () => {
  const abort = new AbortController();
  let volumePath = '';
  const report = await runConformance(GOOD, {
    volumesDir: scratch,
    jobs: 1,
    signal: abort.signal,
    catalogue: [
      check('create.interrupted', async (ctx) => {
        volumePath = (await ctx.provision(ctx.newVolume())).path;
        abort.abort();
      }),
      check('create.later', async () => {}),
    ],
  });
  expect(report.interrupted).toBe(true);
  expect(report.results[1]).toMatchObject({ id: 'create.later', status: 'skip', reason: 'the run was interrupted' });
  expect(existsSync(volumePath)).toBe(false);
  expect(await readdir(scratch)).toEqual([]);
});

test('a plugin that is there but cannot be run stops the run before any check, with the reason and the fix', async () => {
  const plain = join(scratch, 'not-executable');
  await writeFile(plain, '#!/bin/sh\n');
  await chmod(plain, 0o644);
  await expect(runConformance(plain, { volumesDir: join(scratch, 'volumes') })).rejects.toMatchObject({
    code: 'PLUGIN_NOT_EXECUTABLE',
    message: `${plain} cannot be run: it has no execute bit (mode 644); chmod +x ${plain}`,
    details: { plugin: plain, reason: 'it has no execute bit (mode 644)' },
  });
});

test.each([
  ['a directory', async (p: string) => mkdir(p), 'it is a directory'],
  [
    'a #! line naming nothing',
    async (p: string) => writeFile(p, '#!/no/such/interpreter\n', { mode: 0o755 }),
    'its #! line names /no/such/interpreter, which does not exist on this host (an agent has no PATH either)',
  ],
  [
    'a #! line naming a directory',
    async (p: string) => writeFile(p, '#!/tmp\n', { mode: 0o755 }),
    'its #! line names /tmp, which is a directory, not a program',
  ],
  [
    'no #! line',
    async (p: string) => writeFile(p, 'echo hi\n', { mode: 0o755 }),
    'it is neither a program nor a script: a script must begin with a #! line (for example #!/bin/sh)',
  ],
  ['an empty file', async (p: string) => writeFile(p, '', { mode: 0o755 }), 'it is empty'],
  [
    'a link to nothing',
    async (p: string) => symlink(join(scratch, 'gone'), p),
    'it is a symbolic link to something that does not exist',
  ],
])('a plugin that is %s cannot be run, and says why', async (_what, make, reason) => {
  const plugin = join(scratch, 'plugin');
  await make(plugin);
  await expect(runConformance(plugin, { volumesDir: join(scratch, 'volumes') })).rejects.toMatchObject({
    code: 'PLUGIN_NOT_EXECUTABLE',
    details: { reason },
  });
});

describe('reports', () => {
  test('JUnit XML has a testcase per check, with failures and skips, and escapes the reasons', async () => {
    const report = await runConformance(GOOD, {
      volumesDir: scratch,
      catalogue: [
        check('create.a', async (ctx) => ctx.fail('stdout was "<oops> & more"')),
        check('create.b', async (ctx) => ctx.skip('n/a')),
      ],
    });
    const xml = formatJUnit(report);
    expect(xml).toContain('<testcase classname="dhv.create" name="create.a"');
    expect(xml).toContain('<failure message="stdout was &quot;&lt;oops&gt; &amp; more&quot;" type="required">');
    expect(xml).toContain('<skipped message="required check not judged: n/a"/>');
    expect(xml).toMatch(/<testsuites name="dhv check" tests="2" failures="1" skipped="1"/);
  });

  test('one severity policy: a recommended failure is a warning everywhere; a required skip fails only under strict', async () => {
    const catalogue = [
      check('create.soft', async (ctx) => ctx.fail('not ideal'), { severity: 'recommended' }),
      check('create.unjudged', async (ctx) => ctx.skip('cannot tell')),
    ];
    const lenient = await runConformance(GOOD, { volumesDir: scratch, catalogue });
    expect(lenient).toMatchObject({
      ok: true,
      strict: false,
      summary: { requiredFailed: 0, requiredSkipped: 1, recommendedFailed: 1 },
    });
    const xml = formatJUnit(lenient);
    expect(xml).not.toContain('<failure');
    expect(xml).toContain('recommended check failed (a warning, not a failure): not ideal');
    expect(xml).toMatch(/<testsuites name="dhv check" tests="2" failures="0" skipped="1"/);
    const table = formatHuman(lenient);
    expect(table).toMatch(/FAIL {2}create\.soft .*\(recommended: a warning\)/);
    expect(table).toMatch(/SKIP {2}create\.unjudged .*\(required: not judged\)/);
    expect(table).toContain('1 required check was skipped (create.unjudged); --strict fails the run on that');

    const strict = await runConformance(GOOD, { volumesDir: scratch, catalogue, strict: true });
    expect(strict).toMatchObject({ ok: false, strict: true });
    expect(formatJUnit(strict)).toContain('type="required-skipped"');
    expect(formatJUnit(strict)).toMatch(/failures="1" skipped="0"/);
    expect(formatHuman(strict)).toContain(
      'FAILED (--strict): required checks were skipped, so the plugin was not fully judged: create.unjudged',
    );
  });

  test('setup runs before the first check and teardown after the last, also when a check fails', async () => {
    const log = join(scratch, 'log');
    const report = await runConformance(GOOD, {
      volumesDir: scratch,
      catalogue: [
        check('create.sees-setup', async (ctx) => {
          if (!existsSync(join(scratch, 'made-by-setup'))) ctx.fail('setup did not run first');
        }),
      ],
      setup: [`echo setup >> ${log}`, `touch ${join(scratch, 'made-by-setup')}`],
      teardown: [`echo teardown >> ${log}`, `rm ${join(scratch, 'made-by-setup')}`],
    });
    expect(report.results[0]?.status).toBe('pass');
    expect(await readFile(log, 'utf8')).toBe('setup\nteardown\n');
    await expect(
      runConformance(GOOD, {
        volumesDir: scratch,
        catalogue: [],
        setup: ['exit 3'],
        teardown: [`echo torn >> ${log}`],
      }),
    ).rejects.toMatchObject({
      code: 'CHECK_SETUP_FAILED',
      message: expect.stringContaining('setup command failed (exit status 3): exit 3'),
    });
    expect(await readFile(log, 'utf8')).toBe('setup\nteardown\ntorn\n');
    await rm(log);
  });

  test('custom checks run after the catalogue with the same context, and may not reuse an ID', async () => {
    let volume = '';
    const report = await runConformance(GOOD, {
      volumesDir: scratch,
      only: ['discovery.executable', 'custom'],
      extraChecks: [
        check(
          'custom.keeps-a-file',
          async (ctx) => {
            volume = (await ctx.provision(ctx.newVolume())).path;
          },
          { area: 'custom' },
        ),
      ],
    });
    expect(report.results.map((r) => [r.id, r.status])).toEqual([
      ['discovery.executable', 'pass'],
      ['custom.keeps-a-file', 'pass'],
    ]);
    expect(volume).not.toBe('');
    expect(existsSync(volume)).toBe(false);
    await expect(runConformance(GOOD, { extraChecks: [check('create.path', async () => {})] })).rejects.toMatchObject({
      code: 'INVALID_SETTINGS',
    });
  });

  test('the human table groups by area and gives the reason for each non-pass', async () => {
    const report = await runConformance(GOOD, {
      volumesDir: scratch,
      only: ['discovery.executable', 'errors.unknown-operation'],
    });
    const text = formatHuman(report);
    expect(text).toMatch(/^discovery\n {2}PASS {2}discovery\.executable/m);
    expect(text).toMatch(/^errors\n {2}PASS {2}errors\.unknown-operation/m);
    expect(text).toContain('OK: no required check failed');
  });
});
