import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { conformanceTests, type CheckResult } from '@dhv/harness';
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

// The test API's policy, timeouts and set-up are tested in process: packages/harness/src/conformance/test-api.test.ts.
describe('the test API', () => {
  test('ran every check of the catalogue as its own test, none failing but the hardened client (as root)', () => {
    expect(results.length).toBeGreaterThanOrEqual(25);
    // Its 0700 root-owned folders are not writable to a task on a hardened client, and it takes no uid or gid: a warning.
    expect(results.filter((r) => r.status === 'fail').map((r) => `${r.id} (${r.severity})`)).toEqual(
      process.getuid?.() === 0 ? ['tasks.unprivileged-write-hardened (recommended)'] : [],
    );
  });
});
