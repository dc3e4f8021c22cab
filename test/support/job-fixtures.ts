import type { Job, Task, TaskGroup } from '../../packages/harness/src/jobs/job-spec.js';

/** A task as a job file gives it when it says only its driver and command: the job reader's defaults for the rest. */
export const taskOf = (over: Partial<Task> = {}): Task => ({
  Name: 't',
  Driver: 'raw_exec',
  User: '',
  Config: { command: '/bin/true' },
  VolumeMounts: [],
  Resources: { CPU: 50, MemoryMB: 32 },
  KillTimeout: 5e9,
  KillSignal: 'SIGINT',
  ...over,
});

/** A service job of `groups` in the default namespace, at version 0, not stopped. */
export const jobOf = (groups: TaskGroup[], over: Partial<Job> = {}): Job => ({
  ID: 'j',
  Name: 'j',
  Namespace: 'default',
  Type: 'service',
  TaskGroups: groups,
  Version: 0,
  Stop: false,
  SubmitTime: 0,
  ...over,
});
