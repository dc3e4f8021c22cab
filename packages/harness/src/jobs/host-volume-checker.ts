import { requestedSource, type Job, type TaskGroup, type VolumeRequest } from './job-spec.js';

/** Nomad's constraint names, as placement failures print them. */
export const MISSING_HOST_VOLUMES = 'missing compatible host volumes';
export const MISSING_DRIVERS = 'missing drivers';

/** The task drivers the simulated node offers (as a Linux client with `exec` and `raw_exec`). */
export const NODE_DRIVERS = ['exec', 'raw_exec'] as const;

/** A dynamic volume as the servers hold it: what feasibility reads. */
export interface ServerHostVolume {
  ID: string;
  Name: string;
  Namespace: string;
  State: string;
  RequestedCapabilities: ReadonlyArray<{ AccessMode: string; AttachmentMode: string }>;
}

/** One entry of the node's `HostVolumes` (a static volume has no ID). */
export interface NodeHostVolume {
  ID: string;
  Path: string;
  ReadOnly: boolean;
}

/** An allocation on the node that is not client-terminal, with the job version it runs. */
export interface ProposedAlloc {
  Name: string;
  Namespace: string;
  JobID: string;
  TaskGroup: string;
}

export interface NodeView {
  hostVolumes: ReadonlyMap<string, NodeHostVolume>;
  /** The servers' dynamic volumes, by ID (any namespace). */
  volumes: ReadonlyMap<string, ServerHostVolume>;
  /** Allocations on the node that are not client-terminal, including those placed earlier in this plan. */
  proposed: readonly ProposedAlloc[];
  /** The current version of a job, or undefined once purged. */
  jobOf: (namespace: string, jobId: string) => Job | undefined;
  /** The job's sticky claims no allocation on the node meets now, by volume ID (Nomad's unmet claims). */
  unmetClaims?: ReadonlySet<string>;
}

/**
 * Nomad's feasibility of one node for one allocation of a group: its drivers, then every
 * host volume request (`HostVolumeChecker`). Returns the constraint that filtered the
 * node, or undefined when the allocation can be placed. Sticky claims on a one-node
 * cluster never point elsewhere: a sticky request is met by the node's volume of that name.
 */
export function infeasibility(job: Job, tg: TaskGroup, allocName: string, node: NodeView): string | undefined {
  if (tg.Tasks.some((t) => !(NODE_DRIVERS as readonly string[]).includes(t.Driver))) return MISSING_DRIVERS;
  for (const req of Object.values(tg.Volumes)) {
    if (req.Type !== 'host') continue;
    if (!requestFeasible(job, req, allocName, node)) return MISSING_HOST_VOLUMES;
  }
  return undefined;
}

function requestFeasible(job: Job, req: VolumeRequest, allocName: string, node: NodeView): boolean {
  const cfg = node.hostVolumes.get(requestedSource(req, allocName));
  if (!cfg) return false;
  if (cfg.ID === '') {
    if (req.Sticky) return false;
    return req.ReadOnly || !cfg.ReadOnly;
  }
  const vol = node.volumes.get(cfg.ID);
  if (!vol || vol.Namespace !== job.Namespace) return false;
  if (!hostVolumeIsAvailable(vol, req, node)) return false;
  // A sticky request goes back to a volume it claimed while any claim is unmet.
  if (req.Sticky && node.unmetClaims && node.unmetClaims.size > 0) return node.unmetClaims.has(vol.ID);
  return true;
}

/** Nomad's hostVolumeIsAvailable: ready, the exact capability offered, and the access mode's rule. */
export function hostVolumeIsAvailable(vol: ServerHostVolume, req: VolumeRequest, node: NodeView): boolean {
  if (vol.State !== 'ready') return false;
  const access = req.AccessMode || (req.ReadOnly ? 'single-node-reader-only' : 'single-node-writer');
  const attachment = req.AttachmentMode || 'file-system';
  if (!vol.RequestedCapabilities.some((c) => c.AccessMode === access && c.AttachmentMode === attachment)) return false;
  switch (access) {
    case 'single-node-reader-only':
      return req.ReadOnly;
    case 'single-node-writer':
      return !req.ReadOnly;
    case 'single-node-single-writer':
      return !hasWriter(vol, node);
    case 'single-node-multi-writer':
      return true;
    default:
      return false;
  }
}

/** Whether an allocation on the node writes this volume (its job's current version decides; a purged job counts as one). */
function hasWriter(vol: ServerHostVolume, node: NodeView): boolean {
  const checked = new Set<string>();
  for (const alloc of node.proposed) {
    const key = `${alloc.Namespace}\0${alloc.JobID}\0${alloc.TaskGroup}\0${alloc.Name}`;
    if (checked.has(key)) continue;
    checked.add(key);
    const tg = node.jobOf(alloc.Namespace, alloc.JobID)?.TaskGroups.find((g) => g.Name === alloc.TaskGroup);
    if (!tg) return true;
    for (const req of Object.values(tg.Volumes))
      if (req.Type === 'host' && requestedSource(req, alloc.Name) === vol.Name && !req.ReadOnly) return true;
  }
  return false;
}
