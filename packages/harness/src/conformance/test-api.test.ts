import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { conformanceTests } from './test-api.js';
import type { Check, CheckResult } from './types.js';
import { HARNESS_FIXTURES as FIXTURES, removeTempDir, tempDir } from '../../../../test/support/kit.js';

/**
 * The test API against stand-in test functions (describe, test, afterAll): what it registers
 * and what each registered test does, for checks of a test's own and the catalogue's
 * names. test/check-api.test.ts runs the whole catalogue through it under vitest itself.
 */

afterEach(() => {
  vi.restoreAllMocks();
});

/** Runs conformanceTests against stand-in test functions and reports what each registered test did. */
async function registered(options: Omit<Parameters<typeof conformanceTests>[0], 'describe' | 'test' | 'afterAll'>) {
  const tests: Array<{ name: string; body: (context: { skip: (note?: string) => void }) => Promise<void> }> = [];
  const beforeAlls: Array<() => Promise<void>> = [];
  const afterAlls: Array<() => Promise<void>> = [];
  conformanceTests({
    ...options,
    describe: (_name, body) => body(),
    test: (name, body) => void tests.push({ name, body }),
    beforeAll: (fn) => void beforeAlls.push(fn),
    afterAll: (fn) => void afterAlls.push(fn),
  });
  for (const fn of beforeAlls) await fn();
  const outcomes: Array<{ name: string; outcome: string; message?: string }> = [];
  for (const t of tests) {
    let skipped: string | undefined;
    try {
      await t.body({ skip: (note) => void (skipped = note ?? '') });
      outcomes.push({
        name: t.name,
        outcome: skipped === undefined ? 'pass' : 'skip',
        ...(skipped ? { message: skipped } : {}),
      });
    } catch (err) {
      outcomes.push({ name: t.name, outcome: 'fail', message: (err as Error).message });
    }
  }
  for (const fn of afterAlls) await fn();
  return outcomes;
}

const custom = (id: string, severity: Check['severity'], run: Check['run']): Check => ({
  id,
  area: 'custom',
  title: `${id} holds.`,
  protocolRef: 'PROTOCOL.md § create',
  severity,
  gradeReason: 'a test check',
  run,
});

describe('the test API applies the one severity policy', () => {
  test('a required failure fails its test, a recommended one warns, a required skip is skipped as such and fails under strict', async () => {
    const checks = [
      custom('custom.broken', 'required', async (ctx) => ctx.fail('broken')),
      custom('custom.soft', 'recommended', async (ctx) => ctx.fail('not ideal')),
      custom('custom.unjudged', 'required', async (ctx) => ctx.skip('cannot tell')),
      custom('custom.shares-context', 'required', async (ctx) => void (await ctx.provision(ctx.newVolume()))),
    ];
    const plugin = join(FIXTURES, 'good-plugin');
    const lenient = await registered({ plugin, only: ['custom'], checks });
    expect(lenient.map((o) => [o.name.split(':')[0], o.outcome])).toEqual([
      ['custom.broken', 'fail'],
      ['custom.soft', 'pass'],
      ['custom.unjudged', 'skip'],
      ['custom.shares-context', 'pass'],
    ]);
    expect(lenient[2]?.message).toBe('required check not judged: cannot tell');
    const strict = await registered({ plugin, only: ['custom'], checks, strict: true });
    expect(strict[2]).toMatchObject({
      outcome: 'fail',
      message: expect.stringContaining('is required and was skipped'),
    });
    expect(strict[1]?.outcome).toBe('pass');
  });

  test('a suite that cannot run here says so in one test: skipped, or failed under strict', async () => {
    const plugin = join(FIXTURES, 'good-plugin');
    const lenient = await registered({ plugin, unavailable: 'needs root' });
    expect(lenient).toEqual([
      {
        name: expect.stringMatching(/^NOT RUN: \d+ checks, \d+ of them required: needs root$/),
        outcome: 'skip',
        message: 'needs root',
      },
    ]);
    const strict = await registered({ plugin, unavailable: 'needs root', strict: true });
    expect(strict[0]).toMatchObject({
      outcome: 'fail',
      message: expect.stringContaining('could not run (needs root)'),
    });
  });
});

describe("the test API's timeouts", () => {
  test('give the explore area one allowance per sequence it runs, so a loaded machine runs the work rather than cutting it short', () => {
    const timeouts = new Map<string, number | undefined>();
    for (const runs of [3, 12])
      conformanceTests({
        plugin: join(FIXTURES, 'good-plugin'),
        runs,
        describe: (_name, body) => body(),
        test: (name, _body, timeoutMs) => void timeouts.set(`${runs} ${name.split(':')[0]}`, timeoutMs),
        afterAll: () => undefined,
      });
    expect(timeouts.get('3 create.idempotent')).toBe(150_000);
    expect(timeouts.get('3 explore.volumes-survive')).toBe(3 * 150_000);
    expect(timeouts.get('12 explore.volumes-survive')).toBe(12 * 150_000);
    expect(timeouts.get('12 create.idempotent')).toBe(150_000);
  });
});

describe("the test API's reports, set-up and tear-down", () => {
  let dir = '';
  afterEach(async () => {
    if (dir) await removeTempDir(dir);
    dir = '';
  });

  test('hands each result to onResult and warns of a recommended failure and a warning, naming the check', async () => {
    const warned = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const results: CheckResult[] = [];
    const checks = [
      custom('custom.soft', 'recommended', async (ctx) => ctx.fail('not ideal')),
      custom('custom.noted', 'required', async (ctx) => ctx.warn('slow')),
    ];
    const outcomes = await registered({
      plugin: join(FIXTURES, 'good-plugin'),
      only: ['custom'],
      checks,
      onResult: (r) => results.push(r),
    });
    expect(outcomes.map((o) => o.outcome)).toEqual(['pass', 'pass']);
    expect(results.map((r) => [r.id, r.status])).toEqual([
      ['custom.soft', 'fail'],
      ['custom.noted', 'warn'],
    ]);
    expect(warned.mock.calls).toEqual([
      ['custom.soft: recommended check failed (a warning): not ideal'],
      ['custom.noted: warning: slow'],
    ]);
  });

  test('runs the setup commands before the first check and the teardown after the last, in their folder', async () => {
    dir = await tempDir('test-api');
    let seen = '';
    await registered({
      plugin: join(FIXTURES, 'good-plugin'),
      only: ['custom'],
      checks: [
        custom('custom.sees-setup', 'required', async () => void (seen = await readFile(join(dir, 'order'), 'utf8'))),
      ],
      setup: ['echo set-up > order'],
      teardown: ['echo torn-down >> order'],
      commandsCwd: dir,
    });
    expect(seen).toBe('set-up\n');
    expect(await readFile(join(dir, 'order'), 'utf8')).toBe('set-up\ntorn-down\n');
  });

  test('fails its cleanup with what a failed teardown printed, and wants beforeAll for a setup', async () => {
    const plugin = join(FIXTURES, 'good-plugin');
    const checks = [custom('custom.fine', 'required', async () => undefined)];
    await expect(
      registered({ plugin, only: ['custom'], checks, teardown: ['echo gone wrong >&2; exit 3'] }),
    ).rejects.toThrow(
      'dhv conformance cleanup: teardown command failed (exit status 3): echo gone wrong >&2; exit 3\ngone wrong',
    );
    expect(() =>
      conformanceTests({
        plugin,
        only: ['custom'],
        checks,
        setup: ['true'],
        describe: (_name, body) => body(),
        test: () => undefined,
        afterAll: () => undefined,
      }),
    ).toThrow("conformanceTests: setup needs beforeAll (pass vitest's beforeAll)");
  });
});
