import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { conformanceTests, type Check, type CheckResult } from '@dhv/harness';
import { HARNESS_FIXTURES as FIXTURES } from './support/kit.js';

// A plugin author's suite: the whole catalogue, one test per check, against the correct bash plugin.
const results: CheckResult[] = [];
conformanceTests({
  plugin: join(FIXTURES, 'good-plugin'),
  describe,
  test,
  afterAll,
  repeat: 2,
  onResult: (result) => results.push(result),
});

describe('the test API', () => {
  test('ran every check of the catalogue as its own test, none failing but the hardened client (as root)', () => {
    expect(results.length).toBeGreaterThanOrEqual(25);
    // Its 0700 root-owned folders are not writable to a task on a hardened client, and it takes no uid or gid: a warning.
    expect(results.filter((r) => r.status === 'fail').map((r) => `${r.id} (${r.severity})`)).toEqual(
      process.getuid?.() === 0 ? ['tasks.unprivileged-write-hardened (recommended)'] : [],
    );
  });
});

/** Runs conformanceTests against stand-in test functions and reports what each registered test did. */
async function registered(options: Omit<Parameters<typeof conformanceTests>[0], 'describe' | 'test' | 'afterAll'>) {
  const tests: Array<{ name: string; body: (context: { skip: (note?: string) => void }) => Promise<void> }> = [];
  const afterAlls: Array<() => Promise<void>> = [];
  conformanceTests({
    ...options,
    describe: (_name, body) => body(),
    test: (name, body) => void tests.push({ name, body }),
    afterAll: (fn) => void afterAlls.push(fn),
  });
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

describe('the test API applies the one severity policy', () => {
  const custom = (id: string, severity: Check['severity'], run: Check['run']): Check => ({
    id,
    area: 'custom',
    title: `${id} holds.`,
    protocolRef: 'PROTOCOL.md § create',
    severity,
    gradeReason: 'a test check',
    run,
  });

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
