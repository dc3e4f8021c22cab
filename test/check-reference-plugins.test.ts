import { describe, expect, test } from 'vitest';
import { skipRootTests, builtPlugin } from './support/kit.js';
import { SUITE_TIMEOUT_MS, dhvCheck, failedRequired } from './support/check-cli.js';

/**
 * The explorer's default budget is 30 s of random sequences, and a correct plugin never ends
 * it early: for these two, about 7 sequences and 15 processor-seconds each, as many again as
 * the whole catalogue. What this file proves is that the reference plugins pass every check,
 * the explore checks included, so a few sequences do (a fresh random seed each run, printed
 * in the report); test/check-explore.test.ts proves the explorer finds what it must.
 */
const EXPLORE = ['--runs', '2'];

// Side by side: independent plugins, each in its own --volumes-dir.
describe.concurrent('dhv check passes the reference plugins', () => {
  test(
    'dhv-mkdir passes every required check',
    async () => {
      const plugin = builtPlugin('dhv-mkdir');
      const { exitCode, report, leftovers } = await dhvCheck(plugin, EXPLORE);
      expect(failedRequired(report)).toEqual([]);
      expect(exitCode).toBe(0);
      expect(leftovers).toEqual([]);
    },
    SUITE_TIMEOUT_MS,
  );

  describe.skipIf(skipRootTests('dhv check of dhv-loopback'))('as root', () => {
    test(
      'dhv-loopback passes every required check and leaves no mount or loop device',
      async () => {
        const plugin = builtPlugin('dhv-loopback');
        const run = await dhvCheck(plugin, [...EXPLORE, '--capacity-min', '16MiB', '--capacity-max', '64MiB']);
        expect(failedRequired(run.report)).toEqual([]);
        expect(run.exitCode).toBe(0);
        expect(run).toMatchObject({ leftovers: [], leftoverMounts: [], leftoverLoopDevices: [] });
      },
      SUITE_TIMEOUT_MS,
    );
  });
});
