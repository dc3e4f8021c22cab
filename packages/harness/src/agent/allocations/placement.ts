import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Job, TaskGroup } from '../../jobs/job-spec.js';
import type { NodeView, ServerHostVolume } from '../../jobs/host-volume-checker.js';
import type { HostVolumeMap } from '../host-volumes.js';
import type { AllocRecord, JobRecord, TaskState } from '../state/job-records.js';
import { isTerminal, type Allocation } from './alloc-status.js';
import { event } from './task-runner.js';

/** What the scheduler reads to place an allocation on the node, and the allocation it writes. */

/** What the node and the servers hold now, as placement reads it. */
interface NodeNow {
  hostVolumes: HostVolumeMap;
  volumes: ServerHostVolume[];
  allocs: Allocation[];
  jobs: JobRecord[];
}

/** The scheduler's view of the node for placing `job`: its volumes, the allocations proposed on it, the job's unmet sticky claims. */
export function nodeViewOf({ hostVolumes, volumes, allocs, jobs }: NodeNow, job?: Job): NodeView {
  const byId = new Map(jobs.map((j) => [`${j.Job.Namespace}\0${j.Job.ID}`, j.Job]));
  const proposed = allocs.filter((a) => !isTerminal(a));
  // Nomad's unmet sticky claims: the job's claims whose allocation and volume still exist, met by no live allocation of its group.
  const record = job && jobs.find((j) => j.Job.Namespace === job.Namespace && j.Job.ID === job.ID);
  const known = new Set(allocs.map((a) => a.ID));
  const unmetClaims = new Set(
    (record?.StickyClaims ?? [])
      .filter((c) => known.has(c.AllocID) && volumes.some((v) => v.ID === c.VolumeID && v.Namespace === c.Namespace))
      .filter(
        (c) =>
          !proposed.some((a) => a.Namespace === c.Namespace && a.JobID === c.JobID && a.TaskGroup === c.TaskGroupName),
      )
      .map((c) => c.VolumeID),
  );
  return {
    hostVolumes,
    volumes: new Map(volumes.map((v) => [v.ID, v])),
    proposed,
    jobOf: (ns, id) => byId.get(`${ns}\0${id}`),
    unmetClaims,
  };
}

/** A new allocation as the servers write it: desired to run, each task pending with Nomad's "Received" event. */
export function newAllocation(job: Job, tg: TaskGroup, name: string, evalId: string, nodeId: string): AllocRecord {
  const now = Date.now() * 1e6;
  return {
    ID: randomUUID(),
    EvalID: evalId,
    Name: name,
    Namespace: job.Namespace,
    NodeID: nodeId,
    NodeName: hostname(),
    JobID: job.ID,
    JobType: job.Type,
    JobVersion: job.Version,
    TaskGroup: tg.Name,
    DesiredStatus: 'run',
    DesiredDescription: '',
    ClientStatus: 'pending',
    ClientDescription: 'No tasks have started',
    TaskStates: Object.fromEntries(
      tg.Tasks.map((t): [string, TaskState] => [
        t.Name,
        {
          State: 'pending',
          Failed: false,
          StartedAt: null,
          FinishedAt: null,
          Events: [event('Received', 'Task received by client')],
        },
      ]),
    ),
    CreateTime: now,
    ModifyTime: now,
  };
}
