import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { processStartTicks } from '@dhv/sdk/host';
import { jobOf, taskOf } from '../../../../../test/support/job-fixtures.js';
import { removeTempDir, tempDir } from '../../../../../test/support/kit.js';
import { defaultVolumeRequest, type TaskGroup } from '../../jobs/job-spec.js';
import { AgentStore } from '../state/store.js';
import type { AllocRecord, JobRecord, JobRecords, TaskRun } from '../state/job-records.js';
import { jobStatusOf, withClientStatus } from './alloc-status.js';
import { newAllocation } from './placement.js';

/**
 * An allocation's client status, read from what each task's supervisor noted (its run file),
 * in the words of Nomad's task events. The notes are written here as a supervisor writes them.
 */

let dir: string;
let records: JobRecords;
beforeEach(async () => {
  dir = await tempDir('alloc-status');
  records = new AgentStore(dir).jobs;
});
afterEach(() => removeTempDir(dir));

const tg: TaskGroup = {
  Name: 'g',
  Count: 1,
  Volumes: { data: { ...defaultVolumeRequest('data'), Type: 'host', Source: 'data' } },
  Tasks: [taskOf()],
  Update: null,
};
const job = jobOf([tg]);

/** This test's own process: it runs. The same PID with another start time: a process that is gone. */
const alive = () => ({ pid: process.pid, startTicks: processStartTicks(process.pid)! });
const gone = () => ({ pid: process.pid, startTicks: processStartTicks(process.pid)! + 1 });

async function allocWithRun(run: Partial<TaskRun> | undefined, over: Partial<AllocRecord> = {}): Promise<AllocRecord> {
  const alloc = { ...newAllocation(job, tg, 'j.g[0]', 'e', 'n'), ...over };
  await records.putAlloc(alloc);
  if (run) {
    const file = records.taskFiles(alloc.ID, 't').run;
    await mkdir(dirname(file), { recursive: true });
    const supervisor = run.exit ? gone() : alive();
    await writeFile(
      file,
      JSON.stringify({
        startedAt: '2026-01-02T03:04:05.000Z',
        supervisorPid: supervisor.pid,
        supervisorStartTicks: supervisor.startTicks,
        ...run,
      }),
    );
  }
  return alloc;
}

const exited = (exit: Partial<NonNullable<TaskRun['exit']>>) => ({
  ...gone(),
  exit: { code: 0, signal: null, finishedAt: '2026-01-02T03:05:00.000Z', ...exit },
});

const lastEvent = (a: AllocRecord) => a.TaskStates.t!.Events.at(-1)!;

describe("an allocation's client status, from its tasks' supervisors", () => {
  it('stays pending while the supervisor has not started the task, or noted nothing yet', async () => {
    for (const run of [undefined, { pid: 0, startTicks: 0 }]) {
      const a = await withClientStatus(records, await allocWithRun(run));
      expect([a.ClientStatus, a.ClientDescription, a.TaskStates.t!.State]).toEqual([
        'pending',
        'No tasks have started',
        'pending',
      ]);
    }
  });

  it('runs once the task has a PID: Started, "Tasks are running"; computed on each read, not written back', async () => {
    const record = await allocWithRun(alive());
    const a = await withClientStatus(records, record);
    expect([a.ClientStatus, a.ClientDescription]).toEqual(['running', 'Tasks are running']);
    expect(a.TaskStates.t).toMatchObject({ State: 'running', StartedAt: '2026-01-02T03:04:05.000Z' });
    expect(lastEvent(a)).toMatchObject({ Type: 'Started', DisplayMessage: 'Task started by client' });
    expect((await records.alloc(record.ID))!.ClientStatus).toBe('pending');
  });

  it('completes on exit 0 and fails on another code, with Nomad’s Terminated event; a terminal status is kept', async () => {
    const ok = await withClientStatus(records, await allocWithRun(exited({ code: 0 })));
    expect([ok.ClientStatus, ok.ClientDescription]).toEqual(['complete', 'All tasks have completed']);
    expect(lastEvent(ok)).toMatchObject({ Type: 'Terminated', DisplayMessage: 'Exit Code: 0', ExitCode: 0 });
    const bad = await withClientStatus(records, await allocWithRun(exited({ code: 3 })));
    expect([bad.ClientStatus, bad.ClientDescription]).toEqual(['failed', 'Failed tasks']);
    expect(bad.TaskStates.t).toMatchObject({ State: 'dead', Failed: true, FinishedAt: '2026-01-02T03:05:00.000Z' });
    expect(lastEvent(bad)).toMatchObject({ Type: 'Terminated', DisplayMessage: 'Exit Code: 3', ExitCode: 3 });
    // What the client reported stays, so a terminal allocation no longer needs its supervisor's notes.
    expect(await records.alloc(bad.ID)).toEqual(bad);
    expect(await withClientStatus(records, bad)).toBe(bad);
  });

  it('a task killed by a signal exits 128 plus its number, as Nomad’s executor reports it', async () => {
    const a = await withClientStatus(records, await allocWithRun(exited({ code: null, signal: 'SIGKILL' })));
    expect(a.ClientStatus).toBe('failed');
    expect(lastEvent(a)).toMatchObject({
      Type: 'Terminated',
      DisplayMessage: 'Exit Code: 137, Signal: 9',
      ExitCode: 137,
      Signal: 9,
    });
  });

  it('a task that exits after its allocation was stopped was killed: Killed, not failed, whatever its code', async () => {
    const a = await withClientStatus(
      records,
      await allocWithRun(exited({ code: null, signal: 'SIGINT' }), { DesiredStatus: 'stop' }),
    );
    expect(a.ClientStatus).toBe('complete');
    expect(lastEvent(a)).toMatchObject({ Type: 'Killed', DisplayMessage: 'Task successfully killed' });
  });

  it('a task that could not be started is a Driver Failure that fails the task', async () => {
    const a = await withClientStatus(
      records,
      await allocWithRun({
        pid: 0,
        startTicks: 0,
        exit: { code: null, signal: null, finishedAt: '2026-01-02T03:05:00.000Z', error: 'spawn /nope ENOENT' },
      }),
    );
    expect(a.ClientStatus).toBe('failed');
    expect(lastEvent(a)).toMatchObject({
      Type: 'Driver Failure',
      DisplayMessage: 'spawn /nope ENOENT',
      FailsTask: true,
    });
  });

  it('a task whose process and supervisor are both gone without a note (killed, a reboot) failed', async () => {
    const record = await allocWithRun(undefined);
    const file = records.taskFiles(record.ID, 't').run;
    await mkdir(dirname(file), { recursive: true });
    const { pid, startTicks } = gone();
    await writeFile(
      file,
      JSON.stringify({
        pid,
        startTicks,
        supervisorPid: pid,
        supervisorStartTicks: startTicks,
        startedAt: '2026-01-02T03:04:05.000Z',
      }),
    );
    const a = await withClientStatus(records, record);
    expect(a.ClientStatus).toBe('failed');
    expect(lastEvent(a)).toMatchObject({ Type: 'Driver Failure', FailsTask: true });
    expect(lastEvent(a).DisplayMessage).toMatch(/^the task and its supervisor are gone/);
  });
});

describe("a job's status from its allocations, as nomad job status shows it", () => {
  const record = (over: { Stop?: boolean; failed?: boolean } = {}): JobRecord => ({
    Job: { ...job, Stop: over.Stop ?? false },
    FailedTGAllocs: over.failed
      ? { g: { ConstraintFiltered: { 'missing compatible host volumes': 1 }, CoalescedFailures: 0 } }
      : {},
    BlockedEval: '',
  });
  const withStatus = (ClientStatus: AllocRecord['ClientStatus']) => ({
    ...newAllocation(job, tg, 'j.g[0]', 'e', 'n'),
    ClientStatus,
  });

  it('is running while an allocation runs or waits to, pending while blocked, dead otherwise', () => {
    expect(jobStatusOf(record(), [withStatus('pending')])).toBe('running');
    expect(jobStatusOf(record({ failed: true }), [withStatus('running')])).toBe('running');
    expect(jobStatusOf(record({ failed: true }), [withStatus('complete')])).toBe('pending');
    expect(jobStatusOf(record({ failed: true, Stop: true }), [])).toBe('dead');
    expect(jobStatusOf(record(), [withStatus('failed')])).toBe('dead');
  });
});
