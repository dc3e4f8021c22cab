import { setTimeout as sleep } from 'node:timers/promises';
import { allocIndex, type Job, type TaskGroup } from '../../jobs/job-spec.js';
import type { HostVolumeMap } from '../host-volumes.js';
import type { AllocRecord, JobRecords } from '../state/job-records.js';
import { event, prestart, startTask } from './task-runner.js';

/**
 * The client runs an allocation (Nomad's allocrunner): each pending task's prestart, then
 * its supervisor; waits until each runs or has ended.
 */
export async function runAllocation(
  records: JobRecords,
  job: Job,
  alloc: AllocRecord,
  { hostVolumes, execCaps, setup }: { hostVolumes: HostVolumeMap; execCaps: readonly string[]; setup: boolean },
): Promise<void> {
  const tg = job.TaskGroups.find((g) => g.Name === alloc.TaskGroup)!;
  await records.prepareAllocDir(alloc.ID);
  const record: AllocRecord = structuredClone(alloc);
  for (const task of tg.Tasks) {
    const state = record.TaskStates[task.Name]!;
    if (state.State !== 'pending') continue;
    if (setup)
      state.Events.push(
        event('Task Setup', 'Building Task Directory', { Details: { message: 'Building Task Directory' } }),
      );
    const req = {
      job,
      group: tg,
      task,
      allocId: alloc.ID,
      allocName: alloc.Name,
      allocIndex: allocIndex(alloc.Name),
      hostVolumes,
    };
    const mounts = prestart(req);
    if (!Array.isArray(mounts)) {
      state.Events.push(event(mounts.type, mounts.message, { FailsTask: true }));
      state.Events.push(
        event('Not Restarting', 'Error was unrecoverable', {
          RestartReason: 'Error was unrecoverable',
          FailsTask: true,
        }),
      );
      Object.assign(state, { State: 'dead', Failed: true, FinishedAt: new Date().toISOString() });
      continue;
    }
    startTask(records, req, mounts, execCaps);
  }
  await records.putAlloc(record);
  await waitStarted(records, record, tg);
}

/** Until each task that did not fail at once has a PID or an exit noted (10 s at most). */
async function waitStarted(records: JobRecords, alloc: AllocRecord, tg: TaskGroup): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (const task of tg.Tasks) {
    if (alloc.TaskStates[task.Name]!.State === 'dead') continue;
    while (!(await records.taskRun(alloc.ID, task.Name))?.pid) {
      if ((await records.taskRun(alloc.ID, task.Name))?.exit) break;
      if (Date.now() > deadline) break;
      await sleep(5);
    }
  }
}
