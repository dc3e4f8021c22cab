import { randomUUID } from 'node:crypto';
import { AgentError } from '../../errors/agent-error.js';
import type { Job, TaskGroup } from '../../jobs/job-spec.js';
import type { NodeView } from '../../jobs/host-volume-checker.js';
import type { AllocRecord, JobRecords, StickyClaim } from '../state/job-records.js';
import { isTerminal } from './alloc-status.js';

/** Sticky volume claims (Nomad's TaskGroupHostVolumeClaim): written at placement, listed and deleted by `volume claim`. */

/**
 * Nomad writes a sticky claim when a new allocation with a sticky request is placed: one
 * row per namespace, job, group and volume ID; a row whose allocation is terminal is taken
 * over with its ID, one whose allocation still lives gets a new ID. `replaced`: the
 * allocations the same update stops, still live to Nomad here (its plan writes the new
 * allocations before it stops the old).
 */
export async function claimStickyVolumes(
  records: JobRecords,
  job: Job,
  tg: TaskGroup,
  alloc: AllocRecord,
  view: NodeView,
  replaced: ReadonlySet<string> = new Set(),
): Promise<void> {
  const sticky = Object.values(tg.Volumes).filter((v) => v.Type === 'host' && v.Sticky);
  if (sticky.length === 0) return;
  const record = await records.job(job.Namespace, job.ID);
  if (!record) return;
  const claims = [...(record.StickyClaims ?? [])];
  const index = claims.reduce((n, c) => Math.max(n, c.ModifyIndex), 0) + 1;
  for (const req of sticky) {
    const volumeId = view.hostVolumes.get(req.Source)?.ID;
    if (!volumeId) continue;
    const at = claims.findIndex((c) => c.TaskGroupName === tg.Name && c.VolumeID === volumeId);
    const previous = at >= 0 ? claims[at]! : undefined;
    const previousAlloc = previous && (await records.alloc(previous.AllocID));
    const takeOver =
      previousAlloc &&
      !replaced.has(previousAlloc.ID) &&
      (isTerminal(previousAlloc) || previousAlloc.DesiredStatus === 'stop');
    const claim = {
      ID: previous && takeOver ? previous.ID : randomUUID(),
      Namespace: job.Namespace,
      JobID: job.ID,
      TaskGroupName: tg.Name,
      AllocID: alloc.ID,
      VolumeID: volumeId,
      VolumeName: req.Source,
      CreateIndex: previous?.CreateIndex ?? index,
      ModifyIndex: index,
    };
    if (at >= 0) claims[at] = claim;
    else claims.push(claim);
  }
  await records.putJob({ ...record, StickyClaims: claims });
}

/** `volume claim list`: every job's sticky claims (the namespace `*` for all). */
export async function stickyClaims(records: JobRecords, namespace: string): Promise<StickyClaim[]> {
  return (await records.jobs())
    .flatMap((r) => r.StickyClaims ?? [])
    .filter((c) => namespace === '*' || c.Namespace === namespace)
    .sort((a, b) => (a.ID < b.ID ? -1 : 1));
}

/** `volume claim delete`: the claim with this full ID in the namespace, or Nomad's error. */
export async function deleteStickyClaim(records: JobRecords, namespace: string, id: string): Promise<void> {
  for (const record of await records.jobs()) {
    const claims = record.StickyClaims ?? [];
    const found = claims.find((c) => c.ID === id && c.Namespace === namespace);
    if (!found) continue;
    await records.putJob({ ...record, StickyClaims: claims.filter((c) => c !== found) });
    return;
  }
  throw new AgentError('SPEC_INVALID', 'task group volume claim does not exist', { claim: id, namespace });
}
