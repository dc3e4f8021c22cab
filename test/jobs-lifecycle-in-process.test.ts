/**
 * A job's life on the simulated node, through the Agent in the test's own process: tasks that
 * exit, fail to start or are killed by a reboot, updates in place and destructive ones, a
 * blocked job placed when its volume appears, sticky claims across updates, and the errors
 * in Nomad's words. Tasks are `raw_exec` processes on the host (no root, no mount).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isRunningProcess } from '@dhv/sdk/host';
import type { Allocation } from '../packages/harness/src/agent/allocations/alloc-status.js';
import { AgentStore } from '../packages/harness/src/agent/state/store.js';
import { jobAsWritten, openJobsAgent, type JobsAgent } from './support/jobs-in-process.js';

let a: JobsAgent;
beforeEach(async () => {
  a = await openJobsAgent();
});
afterEach(() => a.close());

interface JobShape {
  script?: string;
  command?: string | null;
  driver?: string;
  source?: string;
  sticky?: boolean;
  namespace?: string;
}

/** A service job `id` with group `g` and task `t`, asking for host volume `source` when given. */
function jobText(
  id: string,
  { script = 'sleep 300', command = '/bin/sh', driver = 'raw_exec', source, sticky = false, namespace }: JobShape = {},
) {
  const volume = source
    ? `    volume "data" {\n      type = "host"\n      source = "${source}"\n      sticky = ${sticky}\n    }\n`
    : '';
  const config =
    command === null
      ? ''
      : `      config {\n        command = "${command}"\n        args = ["-c", ${JSON.stringify(script)}]\n      }\n`;
  const ns = namespace ? `  namespace = "${namespace}"\n` : '';
  return `job "${id}" {\n${ns}  group "g" {\n${volume}    task "t" {\n      driver = "${driver}"\n${config}    }\n  }\n}\n`;
}

const run = async (id: string, shape: JobShape = {}) => a.jobs.run(await jobAsWritten(jobText(id, shape), `${id}.hcl`));

/** The allocation once its client status is terminal (the supervisor noted the task's exit). */
async function settled(id: string): Promise<Allocation> {
  for (const deadline = Date.now() + 20_000; ; await new Promise((r) => setTimeout(r, 20))) {
    const alloc = (await a.jobs.alloc(id))!;
    if (['complete', 'failed', 'lost'].includes(alloc.ClientStatus) || Date.now() > deadline) return alloc;
  }
}

const events = (alloc: Allocation) => alloc.TaskStates.t!.Events.map((e) => `${e.Type}: ${e.DisplayMessage}`);

describe('tasks that end by themselves', () => {
  it('exit 0 completes the allocation, another code fails it; its output is the alloc’s logs', async () => {
    const ok = await settled((await run('ok', { script: 'echo done' })).placed[0]!.ID);
    expect([ok.ClientStatus, events(ok).at(-1)]).toEqual(['complete', 'Terminated: Exit Code: 0']);
    const bad = await settled((await run('bad', { script: 'echo out; echo err >&2; exit 3' })).placed[0]!.ID);
    expect([bad.ClientStatus, bad.ClientDescription]).toEqual(['failed', 'Failed tasks']);
    expect(events(bad)).toEqual([
      'Received: Task received by client',
      'Task Setup: Building Task Directory',
      'Started: Task started by client',
      'Terminated: Exit Code: 3',
    ]);
    expect(await a.jobs.logs(bad, 't', 'stdout')).toBe('out\n');
    expect(await a.jobs.logs(bad, 't', 'stderr')).toBe('err\n');
    expect(await a.jobs.logs(bad, 'no-such-task', 'stdout')).toBe('');
  });

  it('a command that cannot be started, or none at all, is a Driver Failure that fails the task', async () => {
    const missing = await settled((await run('nocmd', { command: '/nonexistent/dhv-test' })).placed[0]!.ID);
    expect(missing.ClientStatus).toBe('failed');
    expect(missing.TaskStates.t!.Events.at(-1)).toMatchObject({ Type: 'Driver Failure', FailsTask: true });
    const none = (await run('noconfig', { command: null })).placed[0]!;
    expect(none.ClientStatus).toBe('failed');
    expect(events(none).slice(-2)).toEqual([
      'Driver Failure: failed to decode driver config: missing required field command',
      'Not Restarting: Error was unrecoverable',
    ]);
  });
});

describe('allocations and jobs found by what the user typed', () => {
  it('finds an allocation by a unique prefix; none, or several, in Nomad’s words', async () => {
    // No command: the task fails before any process starts, and the allocation is there to be found.
    const [placed] = (await run('one', { command: null })).placed;
    expect((await a.jobs.findAlloc(placed!.ID.slice(0, 8))).ID).toBe(placed!.ID);
    const records = new AgentStore(a.config.dataDir).jobs;
    for (const id of ['abcd0001-0000-4000-8000-000000000000', 'abcd0002-0000-4000-8000-000000000000'])
      await records.putAlloc({ ...placed!, ID: id, ClientStatus: 'complete' });
    await expect(a.jobs.findAlloc('abcd')).rejects.toMatchObject({
      message: 'Prefix matched multiple allocations',
      details: { matches: ['abcd0001-0000-4000-8000-000000000000', 'abcd0002-0000-4000-8000-000000000000'] },
    });
    await expect(a.jobs.findAlloc('ffffffff-nope')).rejects.toThrow(
      'No allocation(s) with prefix or id "ffffffff-nope" found',
    );
    await expect(a.jobs.findAlloc('')).rejects.toThrow('No allocation(s) with prefix or id "" found');
  });

  it('refuses to stop a job it does not know, a job in a namespace that does not exist, a driver the node lacks', async () => {
    await expect(a.jobs.stop('default', 'nope')).rejects.toThrow('No job(s) with prefix or ID "nope" found');
    await expect(run('elsewhere', { namespace: 'prod' })).rejects.toThrow(
      'job "elsewhere" is in nonexistent namespace "prod"',
    );
    const docker = await run('docker', { driver: 'docker' });
    expect([docker.placed, docker.failures]).toEqual([[], [{ group: 'g', count: 1, constraint: 'missing drivers' }]]);
  });
});

describe('updates, blocked evaluations and sticky claims', () => {
  it('the same spec again changes nothing; a changed task is a destructive update: the old allocation stops, a new one runs, and a sticky claim gets a new ID (Nomad writes the new allocation before it stops the old)', async () => {
    const volume = await a.createVolume('name = "data"\ntype = "host"\nplugin_id = "mkdir"\n');
    const sticky = { source: 'data', sticky: true };
    const [first] = (await run('web', sticky)).placed;
    const [claim] = await a.jobs.stickyClaims('default');
    expect(claim).toMatchObject({ AllocID: first!.ID, VolumeID: volume.ID, CreateIndex: 1, ModifyIndex: 1 });
    const again = await run('web', sticky);
    expect([again.job.Version, again.placed]).toEqual([0, []]);
    const updated = await run('web', { ...sticky, script: 'sleep 301' });
    expect(updated.job.Version).toBe(1);
    expect(updated.placed.map((x) => [x.ClientStatus, x.JobVersion])).toEqual([['running', 1]]);
    expect(await a.jobs.alloc(first!.ID)).toMatchObject({
      DesiredStatus: 'stop',
      DesiredDescription: 'alloc is being updated due to job update',
      ClientStatus: 'complete',
    });
    expect(events((await a.jobs.alloc(first!.ID))!).at(-1)).toBe('Killed: Task successfully killed');
    const [replaced] = await a.jobs.stickyClaims('default');
    expect(replaced).toMatchObject({
      AllocID: updated.placed[0]!.ID,
      VolumeID: volume.ID,
      CreateIndex: 1,
      ModifyIndex: 2,
    });
    expect(replaced!.ID).not.toBe(claim!.ID);
  });

  it('a job blocked on a volume the node lacks is placed once that volume is created', async () => {
    const blocked = await run('waiter', { source: 'later' });
    expect(blocked.placed).toEqual([]);
    await a.createVolume('name = "later"\ntype = "host"\nplugin_id = "mkdir"\n');
    const record = (await a.jobs.job('default', 'waiter'))!;
    expect([record.BlockedEval, record.FailedTGAllocs]).toEqual(['', {}]);
    expect((await a.jobs.allocs()).map((x) => [x.JobID, x.ClientStatus])).toEqual([['waiter', 'running']]);
  });

  it('a sticky claim keeps its ID for a re-run after job stop (its allocation was terminal before the new one)', async () => {
    const volume = await a.createVolume('name = "data"\ntype = "host"\nplugin_id = "mkdir"\n');
    await run('st', { source: 'data', sticky: true, script: 'exit 0' });
    const [first] = await a.jobs.stickyClaims('default');
    expect(first).toMatchObject({ VolumeID: volume.ID, CreateIndex: 1, ModifyIndex: 1 });
    await a.jobs.stop('default', 'st');
    const [rerun] = (await run('st', { source: 'data', sticky: true, script: 'exit 0' })).placed;
    expect(await a.jobs.stickyClaims('default')).toEqual([{ ...first, AllocID: rerun!.ID, ModifyIndex: 2 }]);
  });
});

describe('a host reboot', () => {
  it('kills every task that should run; after the restore each allocation starts its tasks again, Restarting', async () => {
    const [placed] = (await run('rebooted')).placed;
    const records = new AgentStore(a.config.dataDir).jobs;
    const before = (await records.taskRun(placed!.ID, 't'))!;
    expect(await a.jobs.killForReboot()).toEqual([placed!.ID]);
    expect(isRunningProcess(before.pid, before.startTicks)).toBe(false);
    const [restarted] = await a.jobs.restartAfterReboot([placed!.ID, 'no-such-alloc']);
    expect([restarted!.ID, restarted!.ClientStatus]).toEqual([placed!.ID, 'running']);
    expect(events(restarted!).slice(-2)).toEqual([
      'Restarting: Task restarting after the host rebooted',
      'Started: Task started by client',
    ]);
    const after = (await records.taskRun(placed!.ID, 't'))!;
    expect(after.pid).not.toBe(before.pid);
    expect(isRunningProcess(after.pid, after.startTicks)).toBe(true);
  });
});
