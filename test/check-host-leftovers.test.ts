import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { SUITE_TIMEOUT_MS, dhvCheck, failedRequired, type CheckRun } from './support/check-cli.js';
import { HARNESS_FIXTURES as FIXTURES, skipRootTests } from './support/kit.js';
import { isRunningProcess } from '@dhv/sdk/host';
import type { CheckResult } from '../packages/harness/src/conformance/index.js';

/**
 * Issue 38: dhv check says what a plugin's delete or failed create left on the host,
 * instead of releasing it silently in its own teardown, and a plugin that rightly refuses
 * dhv check's default sizes is not failed for it. Every fixture's whole verdict is
 * check-fixtures.test.ts's; this file judges the words, and that dhv check released it all.
 */
const result = (run: CheckRun, id: string): CheckResult => {
  const found = run.report.results.find((r) => r.id === id);
  expect(found, id).toBeDefined();
  return found!;
};

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

/** Nothing left in the scratch --volumes-dir: dhv check released what the plugin left. */
function releasedEverything(run: CheckRun): void {
  expect(run).toMatchObject({ leftovers: [], leftoverMounts: [], leftoverLoopDevices: [] });
}

describe.skipIf(skipRootTests('dhv check of plugins that leave loop devices and mounts'))(
  'a delete that leaves a loop device or a mount fails delete.releases-host-resources',
  () => {
    test.concurrent(
      'delete-leaves-loop-device: the device, its deleted image, what the node suffers, and that dhv check detached it',
      async () => {
        const run = await dhvCheck(join(FIXTURES, 'delete-leaves-loop-device'), [
          '--only',
          'delete.releases-host-resources,delete.idempotent',
        ]);
        expect(failedRequired(run.report)).toEqual(['delete.releases-host-resources']);
        expect(result(run, 'delete.releases-host-resources').reason).toMatch(
          new RegExp(
            `^after the delete of volume ${UUID} succeeded, loop device /dev/loop\\d+ \\(backed by \\S+/volumes/\\.images/${UUID}\\.img, deleted\\) was still attached: its image's space is never freed, and the node runs out of loop devices after a few hundred deletes \\(dhv check detached it\\)$`,
          ),
        );
        // Found wherever a delete ran, not only in the check that judges it.
        const other = result(run, 'delete.idempotent');
        expect(other.status).toBe('warn');
        expect(other.reason).toMatch(
          /^the plugin's successful deletes left loop device \/dev\/loop\d+ \(backed by \S+, deleted\) \(see delete\.releases-host-resources\); dhv check released/,
        );
        expect(run.exitCode).toBe(1);
        releasedEverything(run);
      },
      SUITE_TIMEOUT_MS,
    );

    test.concurrent(
      'delete-leaves-mount: the staging mount named after the volume, and that dhv check unmounted it',
      async () => {
        const run = await dhvCheck(join(FIXTURES, 'delete-leaves-mount'), ['--only', 'delete.releases-host-resources']);
        expect(failedRequired(run.report)).toEqual(['delete.releases-host-resources']);
        expect(result(run, 'delete.releases-host-resources').reason).toMatch(
          new RegExp(
            `^after the delete of volume ${UUID} succeeded, the mount at \\S+/volumes/\\.staging/${UUID} \\(.+\\) was still there: on a node nothing unmounts it, .* \\(dhv check unmounted it\\)$`,
          ),
        );
        releasedEverything(run);
      },
      SUITE_TIMEOUT_MS,
    );

    test.concurrent(
      'the explorer finds the leaked loop device too, and shrinks it to one create',
      async () => {
        const run = await dhvCheck(join(FIXTURES, 'delete-leaves-loop-device'), [
          '--only',
          'explore',
          '--runs',
          '1',
          '--seed',
          '1',
        ]);
        expect(failedRequired(run.report)).toEqual(['explore.releases-host-resources']);
        const explored = result(run, 'explore.releases-host-resources');
        expect(explored.reason).toMatch(
          /loop device \/dev\/loop\d+ \(backed by \S+\.img, deleted\) was still attached/,
        );
        expect(explored.reason).toContain('replay: dhv check');
        releasedEverything(run);
      },
      SUITE_TIMEOUT_MS,
    );
  },
);

describe.concurrent("a plugin that refuses dhv check's default capacities", () => {
  const CANNOT_JUDGE =
    /^cannot judge: the plugin refused the capacities \[16 MiB, 64 MiB\], dhv check's own range \(.*capacity_max 67108864 is below the smallest volume this plugin makes.*\); if it makes no volume that small, declare its smallest: --capacity-floor SIZE \(or ask for sizes it makes: --capacity-min SIZE --capacity-max SIZE\)$/;

  test(
    'refuses-small-capacity: create.bytes-within-capacity and create.expands cannot judge it, with the flags to pass',
    async () => {
      const run = await dhvCheck(join(FIXTURES, 'refuses-small-capacity'), [
        '--only',
        'create.bytes-within-capacity,create.expands',
      ]);
      const within = result(run, 'create.bytes-within-capacity');
      expect(within).toMatchObject({ status: 'skip', notes: [] });
      expect(within.reason).toMatch(CANNOT_JUDGE);
      const expands = result(run, 'create.expands');
      expect(expands.status).toBe('skip');
      expect(expands.reason).toMatch(
        /^cannot judge: the plugin refused dhv check's own 16 MiB volume .*--capacity-floor SIZE \(or ask for sizes it makes: --capacity-min SIZE --capacity-max SIZE\)$/,
      );
      expect(run.exitCode).toBe(0);
      releasedEverything(run);
    },
    SUITE_TIMEOUT_MS,
  );

  test(
    'with capacities it makes, it is judged: create.bytes-within-capacity passes',
    async () => {
      const run = await dhvCheck(join(FIXTURES, 'refuses-small-capacity'), [
        '--only',
        'create.bytes-within-capacity',
        '--capacity-min',
        '300MiB',
        '--capacity-max',
        '512MiB',
      ]);
      expect(result(run, 'create.bytes-within-capacity')).toMatchObject({ status: 'pass' });
    },
    SUITE_TIMEOUT_MS,
  );

  test(
    'refusal-leaves-folder: the refused create is still cannot judge, and the folder it left is named',
    async () => {
      const run = await dhvCheck(join(FIXTURES, 'refusal-leaves-folder'), ['--only', 'create.bytes-within-capacity']);
      const within = result(run, 'create.bytes-within-capacity');
      expect(within.status).toBe('skip');
      expect(within.reason).toMatch(CANNOT_JUDGE);
      expect(within.notes).toEqual([
        expect.stringMatching(
          new RegExp(
            `^the failed create of volume (${UUID}) left \\S+/volumes/\\1: the agent never calls delete after a failed create, so it stays on the node; remove what the create made before it fails \\(dhv check removes it with its sandbox\\)$`,
          ),
        ),
      ]);
      releasedEverything(run);
    },
    SUITE_TIMEOUT_MS,
  );
});

test(
  'delete-leaves-helper-running: the process left in its group is named, and dhv check killed it',
  async () => {
    const run = await dhvCheck(join(FIXTURES, 'delete-leaves-helper-running'), ['--only', 'delete.removes-path']);
    const removes = result(run, 'delete.removes-path');
    expect(removes.status).toBe('warn');
    expect(removes.reason).toMatch(
      /^the plugin exited leaving process \d+ \(\/usr\/bin\/sleep\) of its process group running \(dhv check killed them; a real agent leaves them running\)$/,
    );
    const pids = [...removes.reason!.matchAll(/process (\d+)/g)].map((m) => Number(m[1]));
    // Zombies, done and waiting to be reaped, do not count.
    expect(pids.filter((pid) => isRunningProcess(pid, 0))).toEqual([]);
    expect(run.exitCode).toBe(0);
    releasedEverything(run);
  },
  SUITE_TIMEOUT_MS,
);
