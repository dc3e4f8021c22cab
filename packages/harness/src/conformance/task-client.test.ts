import { resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { runConformance } from './runner.js';
import { removeTempDir, tempDir } from '../../../../test/support/kit.js';

const GOOD = resolve(import.meta.dirname, '../../fixtures/good-plugin');

let scratch: string;
beforeEach(async () => {
  scratch = await tempDir('task-client-test');
});
afterEach(async () => {
  vi.restoreAllMocks();
  await removeTempDir(scratch);
});

describe('the tasks checks without root', () => {
  test('are skipped, never passed, the first saying why and what to do; a skipped required check fails --strict', async () => {
    vi.spyOn(process as { getuid: () => number }, 'getuid').mockReturnValue(1000);
    const report = await runConformance(GOOD, { volumesDir: scratch, only: ['tasks'], strict: true });
    expect(report.results.map((r) => r.status)).toEqual(report.results.map(() => 'skip'));
    const [first, ...rest] = report.results;
    expect(first).toMatchObject({ id: 'tasks.unprivileged-write' });
    expect(first!.reason).toBe(
      "cannot judge without root: a task's volume is bind-mounted into the task's own mount namespace, which only root can make (dhv runs as uid 1000); run dhv check as root to run the tasks checks",
    );
    for (const r of rest) expect(r.reason).toBe('needs tasks.unprivileged-write, which was skipped');
    expect(report.ok).toBe(false);
  });
});
