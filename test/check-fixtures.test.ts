import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { FIXTURES, ROOT, SUITE_TIMEOUT_MS, dhvCheck, failedRequired } from './support/check-cli.js';

/** Each defective fixture and the one required check that must catch it (also the table in the harness README). */
const CAUGHT_BY: Record<string, string> = {
  'log-on-stdout': 'errors.stdout-only-json',
  'create-not-idempotent': 'create.idempotent',
  'delete-not-idempotent': 'delete.idempotent',
  'delete-missing-fails': 'delete.never-created',
  'invalid-version': 'discovery.version-valid',
  'missing-version': 'discovery.version-present',
  'slow-fingerprint': 'discovery.fingerprint-fast',
  'needs-home': 'environment.dhv-only',
  'missing-path': 'create.path',
  'path-not-exist': 'create.path',
  'bytes-as-string': 'create.bytes',
  'unknown-op-exits-0': 'errors.unknown-operation',
  'stack-trace-on-stdout': 'errors.no-stack-traces',
  'partial-create': 'errors.failed-create-leaves-nothing',
  'name-traversal': 'safety.name-traversal',
  'concurrency-unsafe': 'create.concurrent-volumes',
  'ignores-created-path': 'delete.uses-created-path',
};

describe.concurrent('dhv check catches each defect of the fixture plugins on exactly its check', () => {
  for (const [fixture, check] of Object.entries(CAUGHT_BY)) {
    test(`${fixture} fails ${check} and no other required check, leaving nothing behind`, async () => {
      const { exitCode, report, leftovers } = await dhvCheck(join(FIXTURES, fixture));
      expect(failedRequired(report)).toEqual([check]);
      expect(exitCode).toBe(1);
      expect(report.ok).toBe(false);
      expect(leftovers).toEqual([]);
    }, SUITE_TIMEOUT_MS);
  }

  test('the correct bash plugin passes every required check', async () => {
    const { exitCode, report, leftovers } = await dhvCheck(join(FIXTURES, 'good-plugin'));
    expect(failedRequired(report)).toEqual([]);
    expect(report.results.filter((r) => r.status === 'fail')).toEqual([]);
    expect(exitCode).toBe(0);
    expect(leftovers).toEqual([]);
  }, SUITE_TIMEOUT_MS);
});

test('the harness README lists every fixture with the check that catches it', async () => {
  const readme = await readFile(join(ROOT, 'packages/harness/README.md'), 'utf8');
  for (const [fixture, check] of Object.entries(CAUGHT_BY)) {
    expect(readme).toMatch(new RegExp(`\\|\\s*\`${fixture}\`\\s*\\|[^\\n]*\\|\\s*\`${check.replace('.', '\\.')}\`\\s*\\|`));
  }
});
