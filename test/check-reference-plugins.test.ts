import { describe, expect, test } from 'vitest';
import { skipRootTests, builtPlugin } from './support/kit.js';
import { SUITE_TIMEOUT_MS, dhvCheck, failedRequired } from './support/check-cli.js';

describe('dhv check passes the reference plugins', () => {
  test(
    'dhv-mkdir passes every required check',
    async () => {
      const plugin = builtPlugin('dhv-mkdir');
      const { exitCode, report, leftovers } = await dhvCheck(plugin);
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
        const run = await dhvCheck(plugin, ['--capacity-min', '16MiB', '--capacity-max', '64MiB']);
        expect(failedRequired(run.report)).toEqual([]);
        expect(run.exitCode).toBe(0);
        expect(run).toMatchObject({ leftovers: [], leftoverMounts: [], leftoverLoopDevices: [] });
      },
      SUITE_TIMEOUT_MS,
    );
  });
});
