import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Job, Task, TaskGroup } from '../../jobs/job-spec.js';
import { requestedSource } from '../../jobs/job-spec.js';
import type { HostVolumeMap } from '../host-volumes.js';
import type { JobRecords, TaskEvent, TaskRun } from '../state/job-records.js';
import { execArgv, hostArgv, lookupAccount, type TaskMount } from './task-launch.js';
import { isRunningProcess, signalProcess, signalRecordedGroup } from '@dhv/sdk/host';
import { multierrorText } from '../../go/multierror.js';

/** Why a task could not start: Nomad's task event (`Task hook failed` or `Driver Failure`) and its message. */
export interface TaskStartFailure {
  type: 'Task hook failed' | 'Driver Failure';
  message: string;
}

export interface TaskStartRequest {
  job: Job;
  group: TaskGroup;
  task: Task;
  allocId: string;
  allocName: string;
  allocIndex: number;
  /** The node's `HostVolumes` when the allocation's runner was made (Nomad's snapshot). */
  hostVolumes: HostVolumeMap;
}

const isRoot = () => process.getuid?.() === 0;

/**
 * The client's prestart for one task, in Nomad's order: the volume hook (every group host
 * volume on the node, then the task's mounts and whether the driver can mount them), then
 * the driver's own checks (`exec`'s user). Returns the failure as Nomad's task event words,
 * or the mounts to make.
 */
export function prestart(req: TaskStartRequest): TaskStartFailure | TaskMount[] {
  const missing: string[] = [];
  for (const vol of Object.values(req.group.Volumes)) {
    if (vol.Type !== 'host') continue;
    const source = requestedSource(vol, req.allocName);
    if (!req.hostVolumes.has(source)) missing.push(`missing ${source}`);
  }
  if (missing.length > 0) {
    return {
      type: 'Task hook failed',
      message: `volumes: host volume validation error: ${multierrorText(missing)}`,
    };
  }
  const mounts: TaskMount[] = [];
  for (const m of req.task.VolumeMounts) {
    const vol = req.group.Volumes[m.Volume];
    if (!vol || vol.Type !== 'host') continue;
    const source = requestedSource(vol, req.allocName);
    const cfg = req.hostVolumes.get(source);
    if (!cfg) return { type: 'Task hook failed', message: `volumes: no host volume named: ${source}` };
    mounts.push({
      hostPath: cfg.Path,
      destination: m.Destination,
      readOnly: cfg.ReadOnly || vol.ReadOnly || m.ReadOnly,
    });
  }
  if (mounts.length > 0 && req.task.Driver === 'raw_exec')
    return {
      type: 'Task hook failed',
      message: `volumes: task driver "${req.task.Driver}" for "${req.task.Name}" does not support host volumes`,
    };
  if (mounts.length > 0 && !isRoot())
    return {
      type: 'Task hook failed',
      message: `volumes: dhv runs as uid ${process.getuid?.()}, not root: mounting a host volume into a task needs root (run dhv as root, or drop the task's volume_mount)`,
    };
  if (req.task.Driver === 'exec' && isRoot()) {
    const user = req.task.User || 'nobody';
    const account = lookupAccount(user);
    if (account?.uid === 0 || user === 'root')
      return { type: 'Task hook failed', message: `validate: running as user "${user}" is disallowed` };
    if (!account)
      return { type: 'Driver Failure', message: `failed to identify user "${user}": user: unknown user ${user}` };
  }
  if (!req.task.Config.command)
    return { type: 'Driver Failure', message: 'failed to decode driver config: missing required field command' };
  return mounts;
}

/** The supervisor's own file, beside this module in the harness's dist/ (found by the package's name: bundling moves this module). */
function supervisorScript(): string {
  const root = dirname(createRequire(import.meta.url).resolve('@dhv/harness/package.json'));
  return join(root, 'dist', 'agent', 'allocations', 'alloc-supervisor.js');
}

/** The environment Nomad gives a task (the variables it depends on, not all of them). */
function taskEnv(req: TaskStartRequest): Record<string, string> {
  return {
    PATH: '/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin',
    NOMAD_ALLOC_ID: req.allocId,
    NOMAD_ALLOC_NAME: req.allocName,
    NOMAD_ALLOC_INDEX: String(req.allocIndex),
    NOMAD_JOB_ID: req.job.ID,
    NOMAD_JOB_NAME: req.job.Name,
    NOMAD_GROUP_NAME: req.group.Name,
    NOMAD_TASK_NAME: req.task.Name,
    NOMAD_NAMESPACE: req.job.Namespace,
  };
}

/**
 * Starts the task's detached supervisor; it outlives this process. Returns the supervisor's PID.
 * `execCaps`: the capabilities an `exec` task gets on this client (execTaskCaps).
 */
export function startTask(
  records: JobRecords,
  req: TaskStartRequest,
  mounts: readonly TaskMount[],
  execCaps: readonly string[],
): number {
  const files = records.taskFiles(req.allocId, req.task.Name);
  const root = isRoot();
  let argv: string[];
  if (req.task.Driver === 'exec' && root) {
    const account = lookupAccount(req.task.User || 'nobody')!;
    argv = execArgv(req.task, files.root, mounts, account, execCaps);
  } else {
    const account = root && req.task.User ? lookupAccount(req.task.User) : undefined;
    argv = hostArgv(req.task, account);
  }
  const spec = {
    runFile: files.run,
    stdout: files.stdout,
    stderr: files.stderr,
    argv,
    env: taskEnv(req),
    cwd: '/',
    killSignal: req.task.KillSignal,
    killTimeoutMs: Math.round(req.task.KillTimeout / 1e6),
  };
  const child = spawn(process.execPath, [supervisorScript(), JSON.stringify(spec)], {
    detached: true,
    stdio: 'ignore',
  });
  child.unref();
  return child.pid ?? 0;
}

export function event(type: string, message: string, extra: Partial<TaskEvent> = {}): TaskEvent {
  return {
    Type: type,
    Time: Date.now() * 1e6,
    DisplayMessage: message,
    Details: {},
    FailsTask: false,
    ExitCode: 0,
    Signal: 0,
    RestartReason: '',
    ...extra,
  };
}

export type { TaskRun };

/**
 * SIGKILLs a task's supervisor and the task's whole group, each only while it is still the
 * process its run file names (a PID may be another process's by now), as a host reboot would.
 */
export function killTaskRun(
  run: Pick<TaskRun, 'pid' | 'startTicks' | 'supervisorPid'> & { supervisorStartTicks?: number | undefined },
): void {
  if (isRunningProcess(run.supervisorPid, run.supervisorStartTicks ?? 0)) signalProcess(run.supervisorPid, 'SIGKILL');
  if (run.pid > 1) signalRecordedGroup(run.pid, run.startTicks, 'SIGKILL');
}
