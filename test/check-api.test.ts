import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { conformanceTests, type CheckResult } from '@dhv/harness';
import { FIXTURES } from './support/check-cli.js';

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
  test('ran every check of the catalogue as its own test, none failing', () => {
    expect(results.length).toBeGreaterThanOrEqual(25);
    expect(results.filter((r) => r.status === 'fail')).toEqual([]);
  });
});
