import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { SUITE_TIMEOUT_MS, dhvCheck, failedRequired, type CheckRun } from './support/check-cli.js';
import { HARNESS_FIXTURES, REPO_ROOT, builtPlugin, root, skipUnless, tool } from './support/kit.js';

/** Plugins whose volumes a task cannot use as Nomad's clients run tasks (test/fixtures/tasks/). */
const TASK_FIXTURES = join(REPO_ROOT, 'test/fixtures/tasks');

function result(run: CheckRun, id: string) {
  const found = run.report.results.find((r) => r.id === id);
  expect(found, `${id} in the report`).toBeDefined();
  return found!;
}

/** A run leaves nothing: no folder in its --volumes-dir, no mount, no loop device. */
function leftNothing(run: CheckRun): void {
  expect(run).toMatchObject({ leftovers: [], leftoverMounts: [], leftoverLoopDevices: [] });
}

describe
  .skipIf(
    skipUnless(
      'dhv check --only tasks (tasks that mount volumes)',
      root(),
      tool('unshare', 'util-linux'),
      tool('setpriv', 'util-linux'),
    ),
  )
  .concurrent('dhv check --only tasks: what a task can do with the volumes a plugin makes', () => {
    test(
      'dhv-mkdir passes on a default client, and on a hardened one warns that its 0700 folder needs uid and gid',
      async () => {
        const run = await dhvCheck(builtPlugin('dhv-mkdir'), ['--only', 'tasks']);
        expect(run.exitCode).toBe(0);
        const statuses = Object.fromEntries(run.report.results.map((r) => [r.id, r.status]));
        expect(statuses).toEqual({
          'tasks.unprivileged-write': 'pass',
          'tasks.unprivileged-write-hardened': 'warn',
          'tasks.read-only-mount': 'pass',
          'tasks.data-survives-restart': 'pass',
          'tasks.data-survives-reboot': 'pass',
          'tasks.delete-in-use': 'pass',
        });
        const hardened = result(run, 'tasks.unprivileged-write-hardened').reason!;
        expect(hardened).toContain('a task as nobody (uid 65534, gid 65534) cannot write into a fresh volume');
        expect(hardened).toContain('Permission denied');
        expect(hardened).toMatch(/mode 0700 owned by 0:0: without cap_dac_override only its owner and mode decide/);
        expect(hardened).toContain(
          'With parameters { uid = "65534" gid = "65534" } in the volume spec the task could write',
        );
        expect(result(run, 'tasks.delete-in-use').notes.join()).toMatch(
          /refused while in use: "volume [0-9a-f-]{36} in use by allocations: \[[0-9a-f-]{36}\]"; deleted once the task stopped/,
        );
        leftNothing(run);
      },
      SUITE_TIMEOUT_MS,
    );

    test(
      'a plugin whose volume a hardened client cannot write, with no parameter to change it, fails with what the volume needs',
      async () => {
        const run = await dhvCheck(join(HARNESS_FIXTURES, 'good-plugin'), [
          '--only',
          'tasks.unprivileged-write-hardened',
        ]);
        // Recommended: a warning, the run still passes.
        expect(run.exitCode).toBe(0);
        const found = result(run, 'tasks.unprivileged-write-hardened');
        expect(found).toMatchObject({ status: 'fail', severity: 'recommended' });
        expect(found.reason).toContain(
          "On a hardened client (the exec driver's allow_caps without dac_override, as operators harden it: Nomad #26190), a task as nobody (uid 65534, gid 65534) cannot write into a fresh volume: /bin/sh: 1: cannot create /data/dhv-check-task-file: Permission denied.",
        );
        expect(found.reason).toMatch(/mode 0700 owned by 0:0/);
        expect(found.reason).toContain('The plugin refused a volume with parameters { uid = "65534" gid = "65534" }');
        expect(found.reason).toContain('this plugin takes no parameters');
        expect(found.reason).toContain('take parameters (such as uid, gid or mode)');
        leftNothing(run);
      },
      SUITE_TIMEOUT_MS,
    );

    test(
      'a plugin whose volumes no task can write fails tasks.unprivileged-write',
      async () => {
        const run = await dhvCheck(join(TASK_FIXTURES, 'read-only-volume.sh'), ['--only', 'tasks.unprivileged-write']);
        expect(run.exitCode).toBe(1);
        expect(failedRequired(run.report)).toEqual(['tasks.unprivileged-write']);
        expect(result(run, 'tasks.unprivileged-write').reason).toMatch(
          /^a task as nobody \(uid 65534, gid 65534\) could not write into a fresh volume on a default client, whose exec driver gives it cap_dac_override: \/bin\/sh: 1: cannot create \/data\/dhv-check-task-file: Read-only file system; the volume's root: /,
        );
        leftNothing(run);
      },
      SUITE_TIMEOUT_MS,
    );

    test(
      "a plugin whose create makes the volume afresh loses a task's data at a restart and at a reboot",
      async () => {
        const run = await dhvCheck(join(HARNESS_FIXTURES, 'create-wipes-volume'), [
          '--only',
          'tasks.data-survives-restart,tasks.data-survives-reboot',
        ]);
        expect(run.exitCode).toBe(1);
        expect(failedRequired(run.report)).toEqual(['tasks.data-survives-restart', 'tasks.data-survives-reboot']);
        expect(result(run, 'tasks.data-survives-restart').reason).toMatch(
          /^after the agent's restart the file the running task wrote is gone from the volume's path \S+: the restore's create made the volume afresh$/,
        );
        expect(result(run, 'tasks.data-survives-reboot').reason).toMatch(
          /^after the reboot the task ran again and found no dhv-check-task-file in its volume: what it wrote before the reboot is gone/,
        );
        leftNothing(run);
      },
      SUITE_TIMEOUT_MS,
    );
  });
