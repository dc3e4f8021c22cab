import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { dhvCheck } from './support/check-cli.js';
import { HARNESS_FIXTURES as FIXTURES, REFERENCE_MKDIR } from './support/kit.js';

/**
 * create.agent-gone: a real Nomad agent that stops leaves its running create alone, the
 * answer lost; the user retries under a new ID. dhv check stands in for that agent.
 */
const ONLY = ['--only', 'discovery,environment,create.path,create.bytes,create.agent-gone'];

describe.concurrent('create.agent-gone', () => {
  for (const [name, plugin] of [
    ['dhv-mkdir', REFERENCE_MKDIR],
    ['good-plugin', join(FIXTURES, 'good-plugin')],
  ] as const)
    test(`${name}: passes, and names the volume the stopped create left, known to no one`, async () => {
      const { report, leftovers } = await dhvCheck(plugin, ONLY);
      const result = report.results.find((r) => r.id === 'create.agent-gone')!;
      expect(result).toMatchObject({ status: 'pass', severity: 'recommended' });
      expect(result.notes.join('\n')).toMatch(
        /^a create whose agent stopped: it left volumes\/([0-9a-f-]{36})\/, known to no one \(the servers kept no volume \1\); the retry under a new ID succeeded$/,
      );
      expect(leftovers).toEqual([]);
    });

  test('a plugin whose name guard still holds the lost volume: a recommended failure naming the refusal and what was left', async () => {
    const { report, exitCode, leftovers } = await dhvCheck(join(FIXTURES, 'stateful/name-guard-ok'), ONLY);
    const result = report.results.find((r) => r.id === 'create.agent-gone')!;
    expect(result.status).toBe('fail');
    expect(result.reason).toMatch(
      /^the retry of volume "dhv-check-[0-9a-f]{8}" under a new ID failed \(exit status 1: \{"error": "volume name default\/dhv-check-[0-9a-f]{8} is in use by volume [0-9a-f-]{36}"\}\) after a create of that name whose agent stopped: it left .*volumes\/\.names.*On a real client that name stays refused until someone removes it by hand$/,
    );
    expect(exitCode).toBe(0); // recommended: a warning
    expect(leftovers).toEqual([]);
  });
});
