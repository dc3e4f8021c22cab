import { constants } from 'node:os';
import { isRunningProcess } from '@dhv/sdk/host';
import type { AllocRecord, ClientStatus, JobRecord, JobRecords, TaskRun } from '../state/job-records.js';
import { event } from './task-runner.js';

/**
 * An allocation's client status as of now, computed on every read from its record and its
 * tasks' supervisors' notes; and a job's status from its allocations.
 */

/** An allocation with its client status as of now: the supervisors' notes read, dead ones found out. */
export type Allocation = AllocRecord;

const TERMINAL: readonly ClientStatus[] = ['complete', 'failed', 'lost'];
export const isTerminal = (a: Pick<AllocRecord, 'ClientStatus'>) => TERMINAL.includes(a.ClientStatus);

/** Nomad's job status from its allocations (`allocs`: the job's): running while one runs or waits, pending while blocked, else dead. */
export function jobStatusOf(record: JobRecord, allocs: readonly Allocation[]): 'running' | 'pending' | 'dead' {
  if (allocs.some((a) => a.ClientStatus === 'running' || a.ClientStatus === 'pending')) return 'running';
  return !record.Job.Stop && Object.keys(record.FailedTGAllocs).length > 0 ? 'pending' : 'dead';
}

export const DESCRIPTIONS: Record<ClientStatus, string> = {
  pending: 'No tasks have started',
  running: 'Tasks are running',
  complete: 'All tasks have completed',
  failed: 'Failed tasks',
  lost: 'alloc is lost since its node is down',
};

/** The client's view merged in: what each task's supervisor noted, and a supervisor that died unseen. */
export async function withClientStatus(records: JobRecords, record: AllocRecord): Promise<Allocation> {
  if (isTerminal(record)) return record;
  const alloc = structuredClone(record);
  let changed = false;
  for (const [name, state] of Object.entries(alloc.TaskStates)) {
    if (state.State === 'dead') continue;
    let run = await records.taskRun(alloc.ID, name);
    // The task gone and its supervisor too, yet no exit noted: read once more (the note may have just been written).
    if (run && !run.exit && !supervised(run)) run = await records.taskRun(alloc.ID, name);
    if (!run || run.pid === 0) {
      if (run?.exit) {
        state.Events.push(event('Driver Failure', run.exit.error ?? 'failed to start task', { FailsTask: true }));
        Object.assign(state, { State: 'dead', Failed: true, FinishedAt: run.exit.finishedAt });
        changed = true;
      }
      continue;
    }
    if (state.State === 'pending') {
      state.Events.push(event('Started', 'Task started by client'));
      Object.assign(state, { State: 'running', StartedAt: run.startedAt });
      changed = true;
    }
    if (run.exit) {
      const signal = run.exit.signal ? (constants.signals[run.exit.signal as NodeJS.Signals] ?? 0) : 0;
      // Nomad's executor: a task a signal ended exits 128 plus the signal's number, as a shell reports it.
      const code = signal > 0 ? 128 + signal : (run.exit.code ?? 0);
      const stopped = alloc.DesiredStatus === 'stop';
      state.Events.push(
        stopped
          ? event('Killed', 'Task successfully killed')
          : event('Terminated', `Exit Code: ${code}${signal ? `, Signal: ${signal}` : ''}`, {
              ExitCode: code,
              Signal: signal,
            }),
      );
      Object.assign(state, {
        State: 'dead',
        Failed: !stopped && code !== 0,
        FinishedAt: run.exit.finishedAt,
      });
      changed = true;
    } else if (!supervised(run)) {
      state.Events.push(
        event('Driver Failure', 'the task and its supervisor are gone (killed, or the host rebooted)', {
          FailsTask: true,
        }),
      );
      Object.assign(state, { State: 'dead', Failed: true, FinishedAt: new Date().toISOString() });
      changed = true;
    }
  }
  const states = Object.values(alloc.TaskStates);
  const status: ClientStatus = states.every((s) => s.State === 'dead')
    ? states.some((s) => s.Failed)
      ? 'failed'
      : 'complete'
    : states.some((s) => s.State === 'running')
      ? 'running'
      : 'pending';
  if (status !== alloc.ClientStatus) {
    alloc.ClientStatus = status;
    alloc.ClientDescription = DESCRIPTIONS[status];
    changed = true;
  }
  if (changed) {
    alloc.ModifyTime = Date.now() * 1e6;
    // What the client reported is kept, so a terminal allocation no longer needs its supervisor's notes.
    if (isTerminal(alloc)) await records.putAlloc(alloc).catch(() => {});
  }
  return alloc;
}

/** Whether a task that noted no exit still runs, or its supervisor is about to note it. */
export function supervised(run: TaskRun): boolean {
  return (
    isRunningProcess(run.pid, run.startTicks) || isRunningProcess(run.supervisorPid, run.supervisorStartTicks ?? 0)
  );
}
