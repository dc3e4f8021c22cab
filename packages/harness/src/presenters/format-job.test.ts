import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { Allocation } from '../agent/allocations/alloc-status.js';
import type { JobRunReport } from '../agent/allocations/jobs.js';
import type { JobRecord } from '../agent/state/job-records.js';
import type { Job } from '../jobs/job-spec.js';
import { ago, allocStatus, allocTable, jobStatus, placementFailures, runMonitor, stopMonitor } from './format-job.js';

/** `nomad job run`, `job status` and `alloc status` output, against Nomad's command/ code and what a real agent printed. */

const claims = JSON.parse(
  readFileSync(fileURLToPath(new URL('../../../../test/vectors/real-agent/03-claims.json', import.meta.url)), 'utf8'),
) as { steps: Array<{ stdout: string }> };

const NOW = Date.UTC(2026, 11, 7, 12, 0, 0);
const nanos = (ms: number) => ms * 1e6;
const second = 1000;
const minute = 60 * second;
const hour = 60 * minute;
const day = 24 * hour;

describe("ago: Nomad's prettyTimeDiff", () => {
  it.each([
    [0, '0s ago'],
    [400, '0s ago'],
    [12 * second, '12s ago'],
    [minute + 5 * second, '1m5s ago'],
    [2 * hour + 3 * minute + 4 * second, '2h3m ago'],
    [day + 5 * minute + 3 * second, '1d5m ago'],
    [29 * day + 23 * hour, '29d23h ago'],
    // Past 30 days Nomad counts months (30 days) and years (12 of them).
    [45 * day, '1mo15d ago'],
    [400 * day + 7 * hour, '1y1mo ago'],
  ])('%i ms before now is %s', (before, text) => {
    expect(ago(nanos(NOW - before), NOW)).toBe(text);
  });

  it('says "from now" of a time after now (another clock ahead)', () => {
    expect(ago(nanos(NOW + minute + 30 * second), NOW)).toBe('1m30s from now');
  });
});

const alloc = (over: Partial<Allocation> = {}): Allocation => ({
  ID: '0b2c4e6f-0000-4000-8000-000000000001',
  EvalID: 'e1e2e3e4-0000-4000-8000-000000000001',
  Name: 'raw.g[0]',
  Namespace: 'default',
  NodeID: 'a1b2c3d4-0000-4000-8000-000000000001',
  NodeName: 'node-1',
  JobID: 'raw',
  JobType: 'service',
  JobVersion: 0,
  TaskGroup: 'g',
  DesiredStatus: 'run',
  DesiredDescription: '',
  ClientStatus: 'failed',
  ClientDescription: 'Failed tasks',
  TaskStates: {},
  CreateTime: nanos(Date.now()),
  ModifyTime: nanos(Date.now()),
  ...over,
});

describe('the allocation table and the placement failures of nomad job status', () => {
  it('has the columns and widths Nomad printed for one failed allocation (03-claims step 13)', () => {
    const nomad = claims.steps[13]!.stdout.split('\n');
    const lines = allocTable([alloc()]).split('\n');
    expect(lines[0]).toBe(nomad[1]);
    expect(lines[1]!.split(/\s{2,}/)).toEqual(['0b2c4e6f', 'a1b2c3d4', 'g', '0', 'run', 'failed', '0s ago', '0s ago']);
  });

  it('prints the block Nomad printed for a job whose volume exists nowhere (03-claims step 5), groups in order', () => {
    const failed = { ConstraintFiltered: { 'missing compatible host volumes': 1 }, CoalescedFailures: 0 };
    expect(placementFailures({ g: failed })).toBe(claims.steps[5]!.stdout.split('\n\n')[0]);
    expect(
      placementFailures({ web: failed, db: failed })
        .split('\n')
        .filter((l) => l.startsWith('Task Group')),
    ).toEqual(['Task Group "db":', 'Task Group "web":']);
  });
});

const job: Job = {
  ID: 'app',
  Name: 'app',
  Namespace: 'default',
  Type: 'service',
  TaskGroups: [],
  Version: 0,
  Stop: false,
  SubmitTime: nanos(Date.UTC(2026, 11, 7, 11, 0, 0, 123)),
};

describe('nomad job run’s monitor', () => {
  const at = new Date(Date.UTC(2026, 11, 7, 12, 0, 0, 456));
  const report = (over: Partial<JobRunReport>): JobRunReport => ({
    job,
    evalId: '11111111-0000-4000-8000-000000000001',
    placed: [],
    failures: [],
    blockedEval: '',
    ...over,
  });

  it('says where each allocation went and that the evaluation completed', () => {
    const placed = alloc({ ClientStatus: 'running', ClientDescription: 'Tasks are running', TaskGroup: 'web' });
    expect(runMonitor(report({ placed: [placed] }), at).split('\n')).toEqual([
      '==> 2026-12-07T12:00:00Z: Monitoring evaluation "11111111"',
      '    2026-12-07T12:00:00Z: Evaluation triggered by job "app"',
      '    2026-12-07T12:00:00Z: Allocation "0b2c4e6f" created: node "a1b2c3d4", group "web"',
      '    2026-12-07T12:00:00Z: Evaluation status changed: "pending" -> "complete"',
      '==> 2026-12-07T12:00:00Z: Evaluation "11111111" finished with status "complete"',
      '    2026-12-07T12:00:00Z: Allocation "0b2c4e6f" status "running" (Tasks are running)',
    ]);
  });

  it("says of a stop what Nomad's monitor says of its evaluation, to the second", () => {
    expect(stopMonitor('11111111-2222-3333-4444-555555555555', 'app', at).split('\n')).toEqual([
      '==> 2026-12-07T12:00:00Z: Monitoring evaluation "11111111"',
      '    2026-12-07T12:00:00Z: Evaluation triggered by job "app"',
      '    2026-12-07T12:00:00Z: Evaluation status changed: "pending" -> "complete"',
      '==> 2026-12-07T12:00:00Z: Evaluation "11111111" finished with status "complete"',
    ]);
  });

  it('names each group it could not place, the constraint, and the blocked evaluation that waits', () => {
    const text = runMonitor(
      report({
        failures: [{ group: 'web', count: 2, constraint: 'missing compatible host volumes' }],
        blockedEval: '22222222-0000-4000-8000-000000000002',
      }),
      at,
    );
    expect(text.split('\n').slice(3)).toEqual([
      '==> 2026-12-07T12:00:00Z: Evaluation "11111111" finished with status "complete" but failed to place all allocations:',
      '    2026-12-07T12:00:00Z: Task Group "web" (failed to place 2 allocations):',
      '      * Constraint "missing compatible host volumes": 1 nodes excluded by filter',
      // Nomad's monitor names the blocked evaluation here (limit(eval.BlockedEval, ...)), not the one it monitored.
      '    2026-12-07T12:00:00Z: Evaluation "22222222" waiting for additional capacity to place remainder',
    ]);
    expect(
      runMonitor(report({ failures: [{ group: 'web', count: 1, constraint: 'x' }], blockedEval: 'b' }), at),
    ).toContain('(failed to place 1 allocation):');
  });
});

describe('nomad job status and nomad alloc status', () => {
  const record = (over: Partial<JobRecord> = {}, stop = false): JobRecord => ({
    Job: { ...job, Stop: stop },
    FailedTGAllocs: {},
    BlockedEval: '',
    ...over,
  });

  it('prints the job block with Nomad’s fields, its Submit Date as Nomad’s formatTime (to the second)', () => {
    expect(jobStatus(record(), [], { short: true }).split('\n')).toEqual([
      'ID            = app',
      'Name          = app',
      'Submit Date   = 2026-12-07T11:00:00Z',
      'Type          = service',
      'Priority      = 50',
      'Datacenters   = *',
      'Namespace     = default',
      'Node Pool     = default',
      'Status        = dead',
      'Periodic      = false',
      'Parameterized = false',
    ]);
  });

  it('says a stopped job is dead (stopped), with no allocations placed; a blocked one shows its placement failure', () => {
    const stopped = jobStatus(record({}, true), []);
    expect(stopped).toMatch(/^Status += dead \(stopped\)$/m);
    expect(stopped.endsWith('\n\nAllocations\nNo allocations placed')).toBe(true);
    const blocked = jobStatus(
      record({
        FailedTGAllocs: { g: { ConstraintFiltered: { 'missing compatible host volumes': 1 }, CoalescedFailures: 0 } },
      }),
      [],
    );
    expect(blocked).toMatch(/^Status += pending$/m);
    expect(blocked).toContain(`\n\n${claims.steps[5]!.stdout.split('\n\n')[0]}\n\nAllocations\n`);
  });

  it('prints an allocation’s block and each task’s events newest first, times as Nomad’s formatTime', () => {
    const at = (s: number) => nanos(Date.UTC(2026, 11, 7, 12, 0, s, 789));
    const ev = (Type: string, DisplayMessage: string, s: number) => ({
      Type,
      Time: at(s),
      DisplayMessage,
      Details: {},
      FailsTask: false,
      ExitCode: 0,
      Signal: 0,
      RestartReason: '',
    });
    const text = allocStatus(
      alloc({
        TaskStates: {
          t: {
            State: 'dead',
            Failed: true,
            StartedAt: null,
            FinishedAt: null,
            Events: [ev('Received', 'Task received by client', 1), ev('Not Restarting', 'Error was unrecoverable', 2)],
          },
        },
      }),
    );
    const [block, task] = text.split('\n\n');
    expect(block!.split('\n').slice(0, 11)).toEqual([
      'ID                  = 0b2c4e6f-0000-4000-8000-000000000001',
      'Eval ID             = e1e2e3e4',
      'Name                = raw.g[0]',
      'Node ID             = a1b2c3d4',
      'Node Name           = node-1',
      'Job ID              = raw',
      'Job Version         = 0',
      'Client Status       = failed',
      'Client Description  = Failed tasks',
      'Desired Status      = run',
      'Desired Description = <none>',
    ]);
    expect(task!.split('\n')).toEqual([
      'Task "t" is "dead"',
      'Recent Events:',
      'Time                  Type            Description',
      '2026-12-07T12:00:02Z  Not Restarting  Error was unrecoverable',
      '2026-12-07T12:00:01Z  Received        Task received by client',
    ]);
  });
});
