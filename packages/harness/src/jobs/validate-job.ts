import { AgentError } from '../errors/agent-error.js';
import { JOB_TYPES, type Job, type Task, type TaskGroup, type VolumeRequest } from './job-spec.js';
import { multierrorText } from '../go/multierror.js';

const HOST_ACCESS_MODES = ['', 'single-node-writer', 'single-node-single-writer', 'single-node-multi-writer'];

/**
 * What the servers' `Job.Register` refuses before anything is placed (Nomad's
 * `Job.Validate`, `TaskGroup.Validate`, `VolumeRequest.Validate`, `Task.Validate`), in
 * Nomad's words and multierror layout. Whether a volume exists, its namespace and a
 * driver's mount support are not checked here: placement and the client find those.
 */
export function jobProblems(job: Job): string[] {
  const problems: string[] = [];
  if (job.ID === '') problems.push('Missing job ID');
  else if (job.ID.includes(' ')) problems.push('Job ID contains a space');
  if (job.Name === '') problems.push('Missing job name');
  if (!(JOB_TYPES as readonly string[]).includes(job.Type)) problems.push(`Invalid job type: "${job.Type}"`);
  if (job.TaskGroups.length === 0) problems.push('Missing job task groups');
  const seen = new Set<string>();
  for (const [i, tg] of job.TaskGroups.entries()) {
    if (tg.Name === '') problems.push(`Job task group ${i + 1} missing name`);
    else if (seen.has(tg.Name)) problems.push(`Job task group ${i + 1} redefines '${tg.Name}'`);
    seen.add(tg.Name);
    const errs = groupProblems(job, tg);
    if (errs.length > 0) problems.push(`Task group ${tg.Name} validation failed: ${multierrorText(errs)}`);
  }
  return problems;
}

function groupProblems(job: Job, tg: TaskGroup): string[] {
  const problems: string[] = [];
  if (tg.Count < 0) problems.push("Task group count can't be negative");
  if (tg.Tasks.length === 0) problems.push('Missing tasks for task group');
  const canaries = tg.Update?.Canary ?? 0;
  for (const [alias, req] of Object.entries(tg.Volumes)) {
    const errs = volumeProblems(req, job.Type, canaries);
    if (errs.length > 0) problems.push(`Task group volume validation for ${alias} failed: ${multierrorText(errs)}`);
  }
  const names = new Set<string>();
  for (const [i, task] of tg.Tasks.entries()) {
    if (task.Name === '') problems.push(`Task ${i + 1} missing name`);
    else if (names.has(task.Name)) problems.push(`Task ${i + 1} redefines '${task.Name}'`);
    names.add(task.Name);
    const errs = taskProblems(task, tg);
    if (errs.length > 0) problems.push(`Task ${task.Name} validation failed: ${multierrorText(errs)}`);
  }
  return problems;
}

/** Nomad's VolumeRequest.Validate for a host volume (CSI volumes are not modelled). */
function volumeProblems(req: VolumeRequest, jobType: string, canaries: number): string[] {
  if (req.Type !== 'host' && req.Type !== 'csi') return [`volume has unrecognized type ${req.Type}`];
  const problems: string[] = [];
  if (req.Source === '') problems.push('volume has an empty source');
  if (req.PerAlloc) {
    if (jobType === 'system' || jobType === 'sysbatch')
      problems.push('volume cannot be per_alloc for system or sysbatch jobs');
    if (canaries > 0) problems.push('volume cannot be per_alloc when canaries are in use');
    if (req.Sticky) problems.push('volume cannot be per_alloc and sticky at the same time');
  }
  if (req.Type === 'host') {
    if (req.MountOptions) problems.push('host volumes cannot have mount options');
    if (req.AccessMode === 'single-node-reader-only') {
      if (!req.ReadOnly) problems.push(`${req.AccessMode} volumes must be read-only`);
    } else if (!HOST_ACCESS_MODES.includes(req.AccessMode)) {
      problems.push(`host volumes cannot be mounted with ${req.AccessMode} access mode`);
    }
  }
  return problems;
}

const PROPAGATION_MODES = ['', 'private', 'host-to-task', 'bidirectional'];

function taskProblems(task: Task, tg: TaskGroup): string[] {
  const problems: string[] = [];
  if (task.Driver === '') problems.push('Missing task driver');
  for (const [i, mount] of task.VolumeMounts.entries()) {
    const errs: string[] = [];
    if (mount.Volume === '') errs.push('volume mount references an empty volume');
    if (!PROPAGATION_MODES.includes(mount.PropagationMode))
      errs.push(`volume mount has an invalid propagation mode: "${mount.PropagationMode}"`);
    if (!['', 'z', 'Z'].includes(mount.SELinuxLabel))
      errs.push(`volume mount has an invalid SELinux label: "${mount.SELinuxLabel}"`);
    if (errs.length > 0) problems.push(`Volume Mount (${i}) is invalid: "${multierrorText(errs)}"`);
    if (!(mount.Volume in tg.Volumes)) problems.push(`Volume Mount (${i}) references undefined volume ${mount.Volume}`);
  }
  return problems;
}

/**
 * The job as the servers keep it after the HTTP API read it: a group volume whose type is
 * neither `host` nor `csi` (a missing type included) is dropped there, so a mount of it
 * fails as undefined. Throws Nomad's register error when the job does not validate;
 * `refused` are the problems the validators before Nomad's `Job.Validate` found (its
 * namespace check), listed first in the same error.
 */
export function registerableJob(job: Job, refused: readonly string[] = []): Job {
  const kept: Job = {
    ...job,
    TaskGroups: job.TaskGroups.map((tg) => ({
      ...tg,
      Volumes: Object.fromEntries(Object.entries(tg.Volumes).filter(([, v]) => v.Type === 'host' || v.Type === 'csi')),
    })),
  };
  const problems = [...refused, ...jobProblems(kept)];
  if (problems.length > 0) {
    throw new AgentError('SPEC_INVALID', multierrorText(problems).trim(), { problems, job: job.ID });
  }
  return kept;
}
