import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Job } from '../../jobs/job-spec.js';
import { readRegularFile, removeFileDurably, writeFileDurably } from './durable-file.js';
import type { StateLayout } from './layout.js';

export type ClientStatus = 'pending' | 'running' | 'complete' | 'failed' | 'lost';

/** Nomad's TaskEvent, with the fields its CLI and `-json` show. */
export interface TaskEvent {
  Type: string;
  Time: number;
  DisplayMessage: string;
  Details: Record<string, string>;
  FailsTask: boolean;
  ExitCode: number;
  Signal: number;
  RestartReason: string;
}

export interface TaskState {
  State: 'pending' | 'running' | 'dead';
  Failed: boolean;
  StartedAt: string | null;
  FinishedAt: string | null;
  Events: TaskEvent[];
}

/** An allocation as the servers keep it, with what its client last reported. */
export interface AllocRecord {
  ID: string;
  EvalID: string;
  Name: string;
  Namespace: string;
  NodeID: string;
  NodeName: string;
  JobID: string;
  JobType: string;
  JobVersion: number;
  TaskGroup: string;
  DesiredStatus: 'run' | 'stop';
  DesiredDescription: string;
  ClientStatus: ClientStatus;
  ClientDescription: string;
  TaskStates: Record<string, TaskState>;
  CreateTime: number;
  ModifyTime: number;
}

/** The job as registered, and the placement its last evaluation could not make. */
export interface JobRecord {
  Job: Job;
  /** Nomad's `FailedTGAllocs` of the last evaluation: per group, the constraint that filtered the node and how many allocations it left unplaced. */
  FailedTGAllocs: Record<string, { ConstraintFiltered: Record<string, number>; CoalescedFailures: number }>;
  /** The evaluation that placed nothing more and waits for capacity (Nomad's blocked eval), if one. */
  BlockedEval: string;
  /** The job's sticky volume claims (Nomad's `TaskGroupHostVolumeClaim`): kept until the job is purged or the claim deleted. */
  StickyClaims?: StickyClaim[];
}

/** Nomad's TaskGroupHostVolumeClaim: one per namespace, job, group and volume ID. */
export interface StickyClaim {
  ID: string;
  Namespace: string;
  JobID: string;
  TaskGroupName: string;
  AllocID: string;
  VolumeID: string;
  VolumeName: string;
  CreateIndex: number;
  ModifyIndex: number;
}

const b64 = (s: string) => Buffer.from(s).toString('base64url');

/** A supervisor's note of one task: written by the supervisor process alone (alloc-supervisor). */
export interface TaskRun {
  pid: number;
  /** The task process's start time in clock ticks since boot (`/proc/<pid>/stat` field 22): tells a reused PID apart. */
  startTicks: number;
  supervisorPid: number;
  supervisorStartTicks: number;
  startedAt: string;
  exit?: { code: number | null; signal: string | null; finishedAt: string; error?: string };
}

/**
 * The jobs the servers know and the allocations placed on the node, one file each
 * (written by rename after fsync, as every record), plus each allocation's folder.
 */
export class JobRecords {
  constructor(private readonly layout: StateLayout) {}

  private jobFile(namespace: string, id: string): string {
    return join(this.layout.jobs, `${b64(namespace)}.${b64(id)}.json`);
  }

  async job(namespace: string, id: string): Promise<JobRecord | undefined> {
    return readJson<JobRecord>(this.jobFile(namespace, id));
  }

  async jobs(): Promise<JobRecord[]> {
    return readAll<JobRecord>(this.layout.jobs);
  }

  async putJob(record: JobRecord): Promise<void> {
    await mkdir(this.layout.jobs, { recursive: true, mode: 0o700 });
    await writeFileDurably(this.jobFile(record.Job.Namespace, record.Job.ID), JSON.stringify(record));
  }

  async removeJob(namespace: string, id: string): Promise<void> {
    await removeFileDurably(this.jobFile(namespace, id));
  }

  async alloc(id: string): Promise<AllocRecord | undefined> {
    return readJson<AllocRecord>(join(this.layout.allocs, `${id}.json`));
  }

  async allocs(): Promise<AllocRecord[]> {
    return readAll<AllocRecord>(this.layout.allocs);
  }

  async putAlloc(record: AllocRecord): Promise<void> {
    await mkdir(this.layout.allocs, { recursive: true, mode: 0o700 });
    await writeFileDurably(join(this.layout.allocs, `${record.ID}.json`), JSON.stringify(record));
  }

  /** Forgets an allocation and removes its folder (its logs and task roots). */
  async removeAlloc(id: string): Promise<void> {
    await removeFileDurably(join(this.layout.allocs, `${id}.json`));
    await rm(this.allocDir(id), { recursive: true, force: true });
  }

  /** Nomad's `<data_dir>/alloc/<id>`. */
  allocDir(id: string): string {
    return join(this.layout.allocDirs, id);
  }

  /** Where a task's supervisor keeps its note, stdout and stderr (Nomad's `alloc/logs/<task>.stdout.0`). */
  taskFiles(allocId: string, task: string) {
    const dir = this.allocDir(allocId);
    return {
      run: join(dir, `${b64(task)}.run.json`),
      stdout: join(dir, 'alloc', 'logs', `${task}.stdout.0`),
      stderr: join(dir, 'alloc', 'logs', `${task}.stderr.0`),
      root: join(dir, b64(task)),
    };
  }

  async taskRun(allocId: string, task: string): Promise<TaskRun | undefined> {
    return readJson<TaskRun>(this.taskFiles(allocId, task).run);
  }

  /** Forgets a task's last run (a task started again writes a new note). */
  async forgetTaskRun(allocId: string, task: string): Promise<void> {
    await rm(this.taskFiles(allocId, task).run, { force: true });
  }

  async prepareAllocDir(allocId: string): Promise<void> {
    await mkdir(join(this.allocDir(allocId), 'alloc', 'logs'), { recursive: true, mode: 0o711 });
  }
}

async function readJson<T>(path: string): Promise<T | undefined> {
  try {
    return JSON.parse(await readRegularFile(path)) as T;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

async function readAll<T>(dir: string): Promise<T[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const found = await Promise.all(
    names.filter((n) => n.endsWith('.json') && !n.startsWith('.')).map((n) => readJson<T>(join(dir, n))),
  );
  return found.filter((r) => r !== undefined) as T[];
}
