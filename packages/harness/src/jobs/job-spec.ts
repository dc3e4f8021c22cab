/**
 * A job as Nomad's API holds it (`api.Job`), reduced to what dhv models: the fields a
 * job's use of host volumes depends on. Field names are the API's, so `-json` output and
 * a JSON job spec read the same way as Nomad's.
 */
export const JOB_TYPES = ['service', 'batch', 'system', 'sysbatch'] as const;
export type JobType = (typeof JOB_TYPES)[number];

export interface VolumeRequest {
  Name: string;
  Type: string;
  Source: string;
  ReadOnly: boolean;
  AccessMode: string;
  AttachmentMode: string;
  PerAlloc: boolean;
  Sticky: boolean;
  /** Only whether the block was given: host volumes refuse it. */
  MountOptions: Record<string, unknown> | null;
}

export interface VolumeMount {
  Volume: string;
  Destination: string;
  ReadOnly: boolean;
  PropagationMode: string;
  SELinuxLabel: string;
}

export interface Task {
  Name: string;
  Driver: string;
  User: string;
  Config: { command?: string; args?: string[] };
  VolumeMounts: VolumeMount[];
  Resources: { CPU: number; MemoryMB: number };
  /** Nanoseconds, as the API keeps durations. */
  KillTimeout: number;
  KillSignal: string;
}

export interface TaskGroup {
  Name: string;
  Count: number;
  Volumes: Record<string, VolumeRequest>;
  Tasks: Task[];
  Update: { Canary: number } | null;
}

export interface Job {
  ID: string;
  Name: string;
  Namespace: string;
  Type: string;
  TaskGroups: TaskGroup[];
  Version: number;
  Stop: boolean;
  SubmitTime: number;
}

/** The defaults Nomad's API fills in (`Canonicalize`). */
export const DEFAULT_KILL_TIMEOUT_NS = 5_000_000_000;
export const DEFAULT_KILL_SIGNAL = 'SIGINT';

export function defaultVolumeRequest(name: string): VolumeRequest {
  return {
    Name: name,
    Type: '',
    Source: '',
    ReadOnly: false,
    AccessMode: '',
    AttachmentMode: '',
    PerAlloc: false,
    Sticky: false,
    MountOptions: null,
  };
}

/** The part of an allocation's name after its group: `[2]` of `app.web[2]` (Nomad's AllocSuffix). */
export function allocSuffix(allocName: string): string {
  const i = allocName.lastIndexOf('[');
  return i < 0 ? '' : allocName.slice(i);
}

export function allocName(job: Pick<Job, 'ID'>, group: string, index: number): string {
  return `${job.ID}.${group}[${index}]`;
}

/** The index an allocation's name ends with (`web.app[2]` is 2). */
export function allocIndex(name: string): number {
  const m = /\[(\d+)\]$/.exec(name);
  return m ? Number(m[1]) : 0;
}

/** The node volume a request names for one allocation: `source`, or `source[N]` with per_alloc. */
export function requestedSource(req: VolumeRequest, alloc: string): string {
  return req.PerAlloc ? `${req.Source}${allocSuffix(alloc)}` : req.Source;
}
