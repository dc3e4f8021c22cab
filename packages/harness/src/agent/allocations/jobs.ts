import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { isRunningProcess, signalProcess } from '@dhv/sdk/host';
import { AgentError } from '../../errors/agent-error.js';
import { allocIndex, allocName, requestedSource, type Job, type TaskGroup } from '../../jobs/job-spec.js';
import { registerableJob } from '../../jobs/validate-job.js';
import { noSuchNamespaceForJob } from '../servers/namespace-endpoint.js';
import { infeasibility, type NodeView, type ServerHostVolume } from '../../jobs/host-volume-checker.js';
import type { HostVolumeMap } from '../host-volumes.js';
import type { AgentStore } from '../state/store.js';
import type { AllocRecord, JobRecord, StickyClaim } from '../state/job-records.js';
import { event, killTaskRun } from './task-runner.js';
import { DESCRIPTIONS, isTerminal, supervised, withClientStatus, type Allocation } from './alloc-status.js';
import { claimStickyVolumes, deleteStickyClaim, stickyClaims } from './sticky-claims.js';
import { newAllocation, nodeViewOf } from './placement.js';
import { runAllocation } from './alloc-runner.js';

export interface PlacementFailure {
  group: string;
  /** How many allocations of the group could not be placed. */
  count: number;
  constraint: string;
}

export interface JobRunReport {
  job: Job;
  evalId: string;
  placed: Allocation[];
  failures: PlacementFailure[];
  blockedEval: string;
}

export interface JobsContext {
  store: AgentStore;
  nodeId: string;
  /** What the node reports now (its HostVolumes). */
  hostVolumes: () => Promise<HostVolumeMap>;
  /** Starts the agent when it never ran (its node facts are what placement reads); never called under a lock. */
  ensureStarted: () => Promise<void>;
  /** The servers' dynamic volumes on the node. */
  volumes: () => Promise<ServerHostVolume[]>;
  /** The capabilities an `exec` task gets on this client (the driver's defaults that its `allow_caps` allows). */
  execCaps: readonly string[];
}

/**
 * Jobs on the simulated node, as Nomad's servers and client handle them: register (the
 * servers' validation), one evaluation placing each group's allocations by the host
 * volume rules, each task started by its own detached supervisor, stop and purge. There
 * is no daemon: what a later command needs (allocations, their tasks' PIDs and exits)
 * is in the data dir.
 */
export class Jobs {
  constructor(private readonly ctx: JobsContext) {}

  private get records() {
    return this.ctx.store.jobs;
  }

  /** `job run`: register, evaluate, start what was placed; waits until each new task runs or has ended. */
  async run(spec: Job): Promise<JobRunReport> {
    // Before any lock: starting takes the agent exclusive, which placement's locks would wait on for ever.
    await this.ctx.ensureStarted();
    // Held from the namespace check to the job's record: a namespace delete (exclusive) waits, then sees the job.
    return this.ctx.store.lock.shared({ doing: `running job "${spec.ID}"` }, () => this.register(spec));
  }

  private async register(spec: Job): Promise<JobRunReport> {
    const namespaceKnown = (await this.ctx.store.namespaces.get(spec.Namespace)) !== undefined;
    const job = registerableJob(spec, namespaceKnown ? [] : [noSuchNamespaceForJob(spec.ID, spec.Namespace)]);
    const previous = await this.records.job(job.Namespace, job.ID);
    const changed = !previous || previous.Job.Stop || !sameSpec(previous.Job, job);
    // Only a change of a group beyond its count replaces allocations (Nomad's destructive update); a count scales in place.
    const destructive = !previous || !sameSpec(previous.Job, job, { ignoreCounts: true });
    const registered: Job = {
      ...job,
      Version: previous ? previous.Job.Version + (changed ? 1 : 0) : 0,
      SubmitTime: Date.now() * 1e6,
    };
    const evalId = randomUUID();
    // A destructive update: the old version's allocations stop before the new ones are placed.
    const live = (await this.allocs()).filter(
      (a) => a.Namespace === job.Namespace && a.JobID === job.ID && !isTerminal(a),
    );
    const keep = new Set<string>();
    for (const a of live) {
      const tg = registered.TaskGroups.find((g) => g.Name === a.TaskGroup);
      const index = allocIndex(a.Name);
      if (!destructive && tg && index < tg.Count && a.DesiredStatus === 'run') keep.add(a.Name);
    }
    for (const a of live)
      if (keep.has(a.Name) && a.JobVersion !== registered.Version)
        await this.records.putAlloc({ ...(await this.records.alloc(a.ID))!, JobVersion: registered.Version });
    const replaced = live.filter((a) => !keep.has(a.Name));
    await this.stopAllocs(replaced, 'alloc is being updated due to job update');
    return this.evaluate(registered, keep, evalId, new Set(replaced.map((a) => a.ID)));
  }

  /**
   * Nomad's blocked evaluations, retried: each job whose last evaluation could not place
   * everything is evaluated again, as Nomad's servers do when an allocation on the node
   * finishes or the node's volumes change (dhv retries at `job stop`, `volume create`,
   * `volume register` and `agent restart`).
   */
  async retryBlocked(): Promise<JobRunReport[]> {
    const reports: JobRunReport[] = [];
    const allocs = await this.allocs();
    for (const record of await this.records.jobs()) {
      if (!record.BlockedEval || record.Job.Stop) continue;
      const keep = new Set(
        allocs
          .filter((a) => a.Namespace === record.Job.Namespace && a.JobID === record.Job.ID)
          .filter((a) => !isTerminal(a) && a.DesiredStatus === 'run')
          .map((a) => a.Name),
      );
      reports.push(await this.evaluate(record.Job, keep, record.BlockedEval));
    }
    return reports;
  }

  /**
   * One evaluation: every allocation of the job not in `keep` placed, the failures kept on
   * the job, what was placed started. `replaced`: the allocations this update stopped.
   */
  private async evaluate(
    registered: Job,
    keep: ReadonlySet<string>,
    evalId: string,
    replaced: ReadonlySet<string> = new Set(),
  ): Promise<JobRunReport> {
    const previous = await this.records.job(registered.Namespace, registered.ID);
    const jobRecord: JobRecord = {
      Job: registered,
      FailedTGAllocs: {},
      BlockedEval: '',
      ...(previous?.StickyClaims ? { StickyClaims: previous.StickyClaims } : {}),
    };
    await this.records.putJob(jobRecord);
    const placed: Allocation[] = [];
    const failures: PlacementFailure[] = [];
    for (const tg of registered.TaskGroups) {
      for (let index = 0; index < tg.Count; index++) {
        const name = allocName(registered, tg.Name, index);
        if (keep.has(name)) continue;
        const outcome = await this.place(registered, tg, name, evalId, replaced);
        if (typeof outcome === 'string') {
          const f = failures.find((x) => x.group === tg.Name);
          if (f) f.count++;
          else failures.push({ group: tg.Name, count: 1, constraint: outcome });
        } else placed.push(outcome);
      }
    }
    if (failures.length > 0) {
      jobRecord.FailedTGAllocs = Object.fromEntries(
        failures.map((f) => [f.group, { ConstraintFiltered: { [f.constraint]: 1 }, CoalescedFailures: f.count - 1 }]),
      );
      jobRecord.BlockedEval = randomUUID();
      const claims = (await this.records.job(registered.Namespace, registered.ID))?.StickyClaims;
      await this.records.putJob({ ...jobRecord, ...(claims ? { StickyClaims: claims } : {}) });
    }
    const started = await Promise.all(placed.map((a) => this.startAlloc(registered, a)));
    return { job: registered, evalId, placed: started, failures, blockedEval: jobRecord.BlockedEval };
  }

  /**
   * Places one allocation: under the lock of the volume it uses (when it uses one), so a
   * delete of that volume either ran before and the node no longer has it, or runs after
   * and sees the pending allocation as a user.
   */
  private async place(
    job: Job,
    tg: TaskGroup,
    name: string,
    evalId: string,
    replaced: ReadonlySet<string>,
  ): Promise<Allocation | string> {
    const sources = [
      ...new Set(
        Object.values(tg.Volumes)
          .filter((v) => v.Type === 'host')
          .map((v) => requestedSource(v, name)),
      ),
    ];
    const work = { doing: `placing allocation ${name}` };
    const decide = async () => {
      const view = await this.nodeView(job);
      const problem = infeasibility(job, tg, name, view);
      if (problem) return problem;
      const alloc = newAllocation(job, tg, name, evalId, this.ctx.nodeId);
      await this.records.putAlloc(alloc);
      await claimStickyVolumes(this.records, job, tg, alloc, view, replaced);
      return alloc;
    };
    return sources.length === 1
      ? this.ctx.store.lock.name(sources[0]!, work, decide)
      : this.ctx.store.lock.shared(work, decide);
  }

  private async nodeView(job?: Job): Promise<NodeView> {
    const [hostVolumes, volumes, allocs, jobs] = await Promise.all([
      this.ctx.hostVolumes(),
      this.ctx.volumes(),
      this.allocs(),
      this.records.jobs(),
    ]);
    return nodeViewOf({ hostVolumes, volumes, allocs, jobs }, job);
  }

  /** The client runs the allocation (alloc-runner.ts), then reads it back with its client status. */
  private async startAlloc(job: Job, alloc: AllocRecord, { setup = true } = {}): Promise<Allocation> {
    await runAllocation(this.records, job, alloc, {
      hostVolumes: await this.ctx.hostVolumes(),
      execCaps: this.ctx.execCaps,
      setup,
    });
    return (await this.alloc(alloc.ID))!;
  }

  /**
   * What a host reboot does to the tasks: every process of every allocation that should run
   * dies at once (SIGKILL to each task's group and its supervisor). Returns those allocations,
   * which the client runs again once the volumes are restored.
   */
  async killForReboot(): Promise<string[]> {
    const killed: string[] = [];
    for (const a of await this.records.allocs()) {
      if (isTerminal(a) || a.DesiredStatus !== 'run') continue;
      killed.push(a.ID);
      for (const task of Object.keys(a.TaskStates)) {
        const run = await this.records.taskRun(a.ID, task);
        if (!run) continue;
        killTaskRun(run);
        while (supervised(run)) await sleep(5);
      }
    }
    return killed;
  }

  /** After a reboot and the restore: each allocation that should run starts its tasks again (Nomad's client restores and restarts them). */
  async restartAfterReboot(ids: readonly string[]): Promise<Allocation[]> {
    const restarted: Allocation[] = [];
    for (const id of ids) {
      const record = await this.records.alloc(id);
      if (!record || record.DesiredStatus !== 'run') continue;
      const job = (await this.records.job(record.Namespace, record.JobID))?.Job;
      if (!job) continue;
      for (const [task, state] of Object.entries(record.TaskStates)) {
        if (state.State === 'dead' && state.Failed && state.StartedAt === null) continue;
        await this.records.forgetTaskRun(id, task);
        state.Events.push(event('Restarting', 'Task restarting after the host rebooted'));
        Object.assign(state, { State: 'pending', Failed: false, FinishedAt: null });
      }
      const fresh = { ...record, ClientStatus: 'pending' as const, ClientDescription: DESCRIPTIONS.pending };
      await this.records.putAlloc(fresh);
      restarted.push(await this.startAlloc(job, fresh, { setup: false }));
    }
    return restarted;
  }

  /** Every allocation on the node, each with its client status as of now. */
  async allocs(): Promise<Allocation[]> {
    const records = await this.records.allocs();
    return Promise.all(records.map((r) => withClientStatus(this.records, r)));
  }

  async alloc(id: string): Promise<Allocation | undefined> {
    const record = await this.records.alloc(id);
    return record && withClientStatus(this.records, record);
  }

  /** An allocation by its ID or a unique prefix of it. */
  async findAlloc(ref: string): Promise<Allocation> {
    const all = await this.allocs();
    const matches = all.filter((a) => a.ID.startsWith(ref));
    if (matches.length === 1 && ref !== '') return matches[0]!;
    if (matches.length > 1 && ref !== '')
      throw new AgentError('SPEC_INVALID', `Prefix matched multiple allocations`, {
        matches: matches.map((a) => a.ID),
      });
    throw new AgentError('SPEC_INVALID', `No allocation(s) with prefix or id "${ref}" found`, { ref });
  }

  /** `volume claim list`: every job's sticky claims (the namespace `*` for all). */
  stickyClaims(namespace: string): Promise<StickyClaim[]> {
    return stickyClaims(this.records, namespace);
  }

  /** `volume claim delete`: the claim with this full ID in the namespace, or Nomad's error. */
  deleteStickyClaim(namespace: string, id: string): Promise<void> {
    return deleteStickyClaim(this.records, namespace, id);
  }

  /** `job stop`: desired stop, the tasks killed (kill signal, then SIGKILL), waits until each is terminal; `purge` forgets the job. */
  async stop(
    namespace: string,
    id: string,
    { purge = false } = {},
  ): Promise<{ job: Job; evalId: string; stopped: Allocation[] }> {
    const record = await this.records.job(namespace, id);
    if (!record)
      throw new AgentError('SPEC_INVALID', `No job(s) with prefix or ID "${id}" found`, { job: id, namespace });
    const allocs = (await this.allocs()).filter((a) => a.Namespace === namespace && a.JobID === id);
    const stopped = await this.stopAllocs(
      allocs.filter((a) => !isTerminal(a)),
      'alloc is being stopped',
    );
    if (purge) {
      for (const a of allocs) await this.records.removeAlloc(a.ID);
      await this.records.removeJob(namespace, id);
    } else {
      await this.records.putJob({ ...record, Job: { ...record.Job, Stop: true }, FailedTGAllocs: {}, BlockedEval: '' });
    }
    // Allocations that finished free what a blocked job waits for (a single writer's volume).
    await this.retryBlocked();
    return { job: record.Job, evalId: randomUUID(), stopped };
  }

  private async stopAllocs(allocs: Allocation[], description: string): Promise<Allocation[]> {
    for (const a of allocs) {
      await this.records.putAlloc({ ...a, DesiredStatus: 'stop', DesiredDescription: description });
      for (const [task, state] of Object.entries(a.TaskStates)) {
        if (state.State === 'dead') continue;
        const run = await this.records.taskRun(a.ID, task);
        if (run && !run.exit && isRunningProcess(run.supervisorPid, run.supervisorStartTicks ?? 0))
          signalProcess(run.supervisorPid, 'SIGTERM');
      }
    }
    const done: Allocation[] = [];
    for (const a of allocs) done.push(await this.waitTerminal(a.ID));
    return done;
  }

  private async waitTerminal(id: string): Promise<Allocation> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const alloc = (await this.alloc(id))!;
      if (isTerminal(alloc) || Date.now() > deadline) return alloc;
      await sleep(20);
    }
  }

  async job(namespace: string, id: string): Promise<JobRecord | undefined> {
    return this.records.job(namespace, id);
  }

  async jobs(): Promise<JobRecord[]> {
    return this.records.jobs();
  }

  /** Nomad's usage claims of a volume: every allocation on its node that is not client-terminal and whose group asks for its name. */
  async volumeUsers(volume: { Name: string; NodeID: string }): Promise<Allocation[]> {
    const [allocs, jobs] = await Promise.all([this.allocs(), this.records.jobs()]);
    const users: Allocation[] = [];
    for (const a of allocs) {
      if (isTerminal(a) || a.NodeID !== volume.NodeID) continue;
      const job = jobs.find((j) => j.Job.Namespace === a.Namespace && j.Job.ID === a.JobID)?.Job;
      const tg = job?.TaskGroups.find((g) => g.Name === a.TaskGroup);
      for (const req of Object.values(tg?.Volumes ?? {}))
        if (req.Type === 'host' && requestedSource(req, a.Name) === volume.Name) users.push(a);
    }
    return users.sort((x, y) => (x.ID < y.ID ? -1 : 1));
  }

  /** A task's stdout or stderr so far. */
  async logs(alloc: Allocation, task: string, stream: 'stdout' | 'stderr'): Promise<string> {
    return readFile(this.records.taskFiles(alloc.ID, task)[stream], 'utf8').catch(() => '');
  }
}

function sameSpec(a: Job, b: Job, { ignoreCounts = false } = {}): boolean {
  const strip = (j: Job) =>
    JSON.stringify({
      ...j,
      Version: 0,
      SubmitTime: 0,
      Stop: false,
      TaskGroups: j.TaskGroups.map((g) => ({ ...g, Count: ignoreCounts ? 0 : g.Count })),
    });
  return strip(a) === strip(b);
}
