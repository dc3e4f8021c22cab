import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { isRunningProcess, signalProcess } from '@dhv/sdk/host';
import { AgentError } from '../../errors/agent-error.js';
import { allocName, requestedSource, type Job, type TaskGroup } from '../../jobs/job-spec.js';
import { registerableJob } from '../../jobs/validate-job.js';
import { noSuchNamespaceForJob } from '../servers/namespace-endpoint.js';
import { infeasibility, type NodeView, type ServerHostVolume } from '../../jobs/host-volume-checker.js';
import type { HostVolumeMap } from '../host-volumes.js';
import type { AgentStore } from '../state/store.js';
import type { AllocRecord, ClientStatus, JobRecord, StickyClaim, TaskRun, TaskState } from '../state/job-records.js';
import { event, killTaskRun, prestart, startTask } from './task-runner.js';

/** An allocation with its client status as of now: the supervisors' notes read, dead ones found out. */
export type Allocation = AllocRecord;

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

const TERMINAL: readonly ClientStatus[] = ['complete', 'failed', 'lost'];
export const isTerminal = (a: Pick<AllocRecord, 'ClientStatus'>) => TERMINAL.includes(a.ClientStatus);

/** Nomad's job status from its allocations (`allocs`: the job's): running while one runs or waits, pending while blocked, else dead. */
export function jobStatusOf(record: JobRecord, allocs: readonly Allocation[]): 'running' | 'pending' | 'dead' {
  if (allocs.some((a) => a.ClientStatus === 'running' || a.ClientStatus === 'pending')) return 'running';
  return !record.Job.Stop && Object.keys(record.FailedTGAllocs).length > 0 ? 'pending' : 'dead';
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
      const index = indexOf(a.Name);
      if (!destructive && tg && index < tg.Count && a.DesiredStatus === 'run') keep.add(a.Name);
    }
    for (const a of live)
      if (keep.has(a.Name) && a.JobVersion !== registered.Version)
        await this.records.putAlloc({ ...(await this.records.alloc(a.ID))!, JobVersion: registered.Version });
    await this.stopAllocs(
      live.filter((a) => !keep.has(a.Name)),
      'alloc is being updated due to job update',
    );
    return this.evaluate(registered, keep, evalId);
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

  /** One evaluation: every allocation of the job not in `keep` placed, the failures kept on the job, what was placed started. */
  private async evaluate(registered: Job, keep: ReadonlySet<string>, evalId: string): Promise<JobRunReport> {
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
        const outcome = await this.place(registered, tg, name, evalId);
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
  private async place(job: Job, tg: TaskGroup, name: string, evalId: string): Promise<Allocation | string> {
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
      const now = Date.now() * 1e6;
      const alloc: AllocRecord = {
        ID: randomUUID(),
        EvalID: evalId,
        Name: name,
        Namespace: job.Namespace,
        NodeID: this.ctx.nodeId,
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
      await this.records.putAlloc(alloc);
      await this.claimStickyVolumes(job, tg, alloc, view);
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
            !proposed.some(
              (a) => a.Namespace === c.Namespace && a.JobID === c.JobID && a.TaskGroup === c.TaskGroupName,
            ),
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

  /**
   * Nomad writes a sticky claim when a new allocation with a sticky request is placed: one
   * row per namespace, job, group and volume ID; a row whose allocation is terminal is taken
   * over with its ID, one whose allocation still lives gets a new ID.
   */
  private async claimStickyVolumes(job: Job, tg: TaskGroup, alloc: AllocRecord, view: NodeView): Promise<void> {
    const sticky = Object.values(tg.Volumes).filter((v) => v.Type === 'host' && v.Sticky);
    if (sticky.length === 0) return;
    const record = await this.records.job(job.Namespace, job.ID);
    if (!record) return;
    const claims = [...(record.StickyClaims ?? [])];
    const index = claims.reduce((n, c) => Math.max(n, c.ModifyIndex), 0) + 1;
    for (const req of sticky) {
      const volumeId = view.hostVolumes.get(req.Source)?.ID;
      if (!volumeId) continue;
      const at = claims.findIndex((c) => c.TaskGroupName === tg.Name && c.VolumeID === volumeId);
      const previous = at >= 0 ? claims[at]! : undefined;
      const previousAlloc = previous && (await this.records.alloc(previous.AllocID));
      const takeOver = previousAlloc && (isTerminal(previousAlloc) || previousAlloc.DesiredStatus === 'stop');
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
    await this.records.putJob({ ...record, StickyClaims: claims });
  }

  /** `volume claim list`: every job's sticky claims (the namespace `*` for all). */
  async stickyClaims(namespace: string): Promise<StickyClaim[]> {
    return (await this.records.jobs())
      .flatMap((r) => r.StickyClaims ?? [])
      .filter((c) => namespace === '*' || c.Namespace === namespace)
      .sort((a, b) => (a.ID < b.ID ? -1 : 1));
  }

  /** `volume claim delete`: the claim with this full ID in the namespace, or Nomad's error. */
  async deleteStickyClaim(namespace: string, id: string): Promise<void> {
    for (const record of await this.records.jobs()) {
      const claims = record.StickyClaims ?? [];
      const found = claims.find((c) => c.ID === id && c.Namespace === namespace);
      if (!found) continue;
      await this.records.putJob({ ...record, StickyClaims: claims.filter((c) => c !== found) });
      return;
    }
    throw new AgentError('SPEC_INVALID', 'task group volume claim does not exist', { claim: id, namespace });
  }

  /** The client runs the allocation: each task's prestart, then its supervisor; waits until each runs or ended. */
  private async startAlloc(job: Job, alloc: AllocRecord, { setup = true } = {}): Promise<Allocation> {
    const tg = job.TaskGroups.find((g) => g.Name === alloc.TaskGroup)!;
    const hostVolumes = await this.ctx.hostVolumes();
    await this.records.prepareAllocDir(alloc.ID);
    const record: AllocRecord = structuredClone(alloc);
    for (const task of tg.Tasks) {
      const state = record.TaskStates[task.Name]!;
      if (state.State !== 'pending') continue;
      if (setup)
        state.Events.push(
          event('Task Setup', 'Building Task Directory', { Details: { message: 'Building Task Directory' } }),
        );
      const req = {
        job,
        group: tg,
        task,
        allocId: alloc.ID,
        allocName: alloc.Name,
        allocIndex: indexOf(alloc.Name),
        hostVolumes,
      };
      const mounts = prestart(req);
      if (!Array.isArray(mounts)) {
        state.Events.push(event(mounts.type, mounts.message, { FailsTask: true }));
        state.Events.push(
          event('Not Restarting', 'Error was unrecoverable', {
            RestartReason: 'Error was unrecoverable',
            FailsTask: true,
          }),
        );
        Object.assign(state, { State: 'dead', Failed: true, FinishedAt: new Date().toISOString() });
        continue;
      }
      startTask(this.records, req, mounts, this.ctx.execCaps);
    }
    await this.records.putAlloc(record);
    await this.waitStarted(record, tg);
    return (await this.alloc(alloc.ID))!;
  }

  private async waitStarted(alloc: AllocRecord, tg: TaskGroup): Promise<void> {
    const deadline = Date.now() + 10_000;
    for (const task of tg.Tasks) {
      if (alloc.TaskStates[task.Name]!.State === 'dead') continue;
      while (!(await this.records.taskRun(alloc.ID, task.Name))?.pid) {
        if ((await this.records.taskRun(alloc.ID, task.Name))?.exit) break;
        if (Date.now() > deadline) break;
        await sleep(5);
      }
    }
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
        while (this.supervised(run)) await sleep(5);
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
    return Promise.all(records.map((r) => this.withClientStatus(r)));
  }

  async alloc(id: string): Promise<Allocation | undefined> {
    const record = await this.records.alloc(id);
    return record && this.withClientStatus(record);
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

  /** The client's view merged in: what each task's supervisor noted, and a supervisor that died unseen. */
  private async withClientStatus(record: AllocRecord): Promise<Allocation> {
    if (isTerminal(record)) return record;
    const alloc = structuredClone(record);
    let changed = false;
    for (const [name, state] of Object.entries(alloc.TaskStates)) {
      if (state.State === 'dead') continue;
      let run = await this.records.taskRun(alloc.ID, name);
      // The task gone and its supervisor too, yet no exit noted: read once more (the note may have just been written).
      if (run && !run.exit && !this.supervised(run)) run = await this.records.taskRun(alloc.ID, name);
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
        const code = run.exit.code ?? 0;
        const signal = run.exit.signal ?? '';
        const stopped = alloc.DesiredStatus === 'stop';
        state.Events.push(
          stopped
            ? event('Killed', 'Task successfully killed')
            : event('Terminated', `Exit Code: ${code}${signal ? `, Signal: ${signal}` : ''}`, { ExitCode: code }),
        );
        Object.assign(state, {
          State: 'dead',
          Failed: !stopped && (code !== 0 || signal !== ''),
          FinishedAt: run.exit.finishedAt,
        });
        changed = true;
      } else if (!this.supervised(run)) {
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
      if (isTerminal(alloc)) await this.records.putAlloc(alloc).catch(() => {});
    }
    return alloc;
  }

  /** Whether a task that noted no exit still runs, or its supervisor is about to note it. */
  private supervised(run: TaskRun): boolean {
    return (
      isRunningProcess(run.pid, run.startTicks) || isRunningProcess(run.supervisorPid, run.supervisorStartTicks ?? 0)
    );
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

const DESCRIPTIONS: Record<ClientStatus, string> = {
  pending: 'No tasks have started',
  running: 'Tasks are running',
  complete: 'All tasks have completed',
  failed: 'Failed tasks',
  lost: 'alloc is lost since its node is down',
};

function indexOf(name: string): number {
  const m = /\[(\d+)\]$/.exec(name);
  return m ? Number(m[1]) : 0;
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
