import { execFileSync } from 'node:child_process';
import { describe, expect, test } from 'vitest';
import { skipRootTests } from './support/root.js';
import { SUITE_TIMEOUT_MS, dhvCheck, ensureBuilt, failedRequired } from './support/check-cli.js';

describe('dhv check passes the reference plugins', () => {
  test('dhv-mkdir passes every required check', async () => {
    const plugin = await ensureBuilt('@dhv/plugin-mkdir', 'packages/plugin-mkdir/dist/dhv-mkdir');
    const { exitCode, report, leftovers } = await dhvCheck(plugin);
    expect(failedRequired(report)).toEqual([]);
    expect(exitCode).toBe(0);
    expect(leftovers).toEqual([]);
  }, SUITE_TIMEOUT_MS);

  describe.skipIf(skipRootTests())('as root', () => {
    test('dhv-loopback passes every required check and leaves no mount or loop device', async () => {
      const plugin = await ensureBuilt('@dhv/plugin-loopback', 'packages/plugin-loopback/dist/dhv-loopback');
      const { exitCode, report, leftovers } = await dhvCheck(plugin, ['--capacity-min', '16MiB', '--capacity-max', '64MiB']);
      expect(failedRequired(report)).toEqual([]);
      expect(exitCode).toBe(0);
      expect(leftovers).toEqual([]);
      expect(execFileSync('/usr/sbin/losetup', ['-a'], { encoding: 'utf8' })).not.toContain('dhv-check-test-');
      expect(execFileSync('/usr/bin/findmnt', ['-rn', '-o', 'TARGET'], { encoding: 'utf8' })).not.toContain('dhv-check-test-');
    }, SUITE_TIMEOUT_MS);
  });
});
