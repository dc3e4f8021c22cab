import { dirname } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { isStrictlyInside } from '@dhv/sdk';
import { cleanupDeleteRequest, deleteRequest, restoreRequest } from '@dhv/sdk/client';
import { succeeded } from '../raw-run.js';
import { forceRemove } from '../scratch-dirs.js';
import { capacityBound } from '../space-budget.js';
import { OutsideSandboxError, writeInsideSandbox } from '../sandbox-writes.js';
import type { CheckContext } from '../types.js';
import { AgentCalls } from './agent-calls.js';
import { CrowdedRestores } from './crowded-restore.js';
import { volumesDirUnder, type ConditionedVolumesDir } from './host-conditions.js';
import type { CreateTime } from './create-speed.js';
import type { KillEvent } from './kill-events.js';
import { LONG_STEM } from './pool.js';
import { formatStep, formatVolume, type Pick, type Step, type VolumeCall, type VolumeKey } from './recipe.js';
import { RECOMMENDED_EXPLORE_CHECK } from './verdicts.js';
import { AT_THE_END, StepNotPossible, Violation } from './violation.js';
import { existing, isDirectory, MARKER_FILE, markerIn, namedBelow, VOLUME_DATA } from './volume-disk.js';
import { VolumeBook, whyNot, type Volume } from './volume-book.js';

const MiB = 1024n * 1024n;

/**
 * How a run ends (finish): `full`, as a node's life goes on (a fingerprint, two restarts,
 * every delete); `deletes`, every delete alone, for the systematic phase's scenarios, whose
 * recipes hold the restarts they need.
 */
export type Ending = 'full' | 'deletes';
const DELETES_AT_THE_END = '(in the deletes of every volume a scenario ends with)';

/**
 * One exploration run: a fresh volumes dir, the volumes the agent believes exist, and
 * the agent's calls made exactly as the agent makes them. After every step it checks
 * the model of what Nomad needs of the volumes it believes live; the first break is
 * thrown as a Violation. Breaks only cosmetic (a leftover) are kept and the run goes on.
 */
export class VolumeLab {
  readonly history: Step[] = [];
  /** The first cosmetic break seen; the run carried on past it. */
  cosmetic: { violation: Violation; steps: Step[] } | undefined;
  calls = 0;
  /** Each new volume's create that succeeded: its capacity and how long it took. */
  readonly createTimes: CreateTime[] = [];
  private readonly book = new VolumeBook();
  private readonly agent: AgentCalls;
  private volumeCount = 0;
  /** In the steps every run ends with, which the history leaves out. */
  private ending = false;
  private fillCount = 0;
  private readonly crowded: CrowdedRestores;
  /** The host condition the volumes dir was made under (a `volumes-dir` step). */
  private condition: ConditionedVolumesDir | undefined;
  /** The run's own folder, which discard removes: a `volumes-dir` step makes the volumes dir below it. */
  private readonly root: string;

  constructor(
    private readonly ctx: CheckContext,
    public volumesDir: string,
    private readonly runNumber: number,
    /** Whether a cosmetic break ends the run (when it is the one being shrunk). */
    private readonly stopAtCosmetic = false,
    private readonly endWith: Ending = 'full',
  ) {
    this.agent = new AgentCalls(ctx, this.createTimes);
    this.crowded = new CrowdedRestores(dirname(volumesDir), ctx.plugin);
    this.root = volumesDir;
  }

  /** The step with its picks turned into names, or undefined when it cannot run now (VolumeBook.resolve). */
  resolve(step: Step<VolumeKey | Pick>): Step | undefined {
    return this.book.resolve(step);
  }

  /**
   * The step, or as much of it as the volumes' state allows (of calls run at once, those
   * that can run; none, and nothing is run): a recipe with steps dropped from it may aim
   * a later step at a volume that no longer exists.
   */
  async runWherePossible(step: Step): Promise<void> {
    if (step.kind !== 'together') return this.book.canRun(step) ? this.run(step) : undefined;
    const calls = this.book.possibleCalls(step.calls);
    if (calls.length > 1) return this.run({ kind: 'together', calls });
    if (calls.length === 1) return this.run(calls[0]!);
  }

  async run(step: Step): Promise<void> {
    if (!this.book.canRun(step)) throw new StepNotPossible(`"${formatStep(step)}" cannot run: ${whyNot(step)}`);
    if (step.kind !== 'restore' || !step.crowded) await this.crowded.end();
    if (!this.ending) this.history.push(step);
    this.agent.said.length = 0;
    try {
      await this.runSteps(step);
    } catch (err) {
      if (err instanceof Violation) {
        const condition = this.condition?.words;
        if (condition !== undefined && !err.message.includes(condition)) err.message += `, ${condition}`;
        err.step ??= step;
        // A failed call's message carries its own (stderr ''); else the calls of the step that broke the model.
        err.stderr ??=
          this.agent.said
            .slice(-3)
            .map((s) => `the ${s.what}: ${s.stderr}`)
            .join('; ') || undefined;
      }
      throw err;
    }
  }

  private async runSteps(step: Step): Promise<void> {
    switch (step.kind) {
      case 'together': {
        const deleted: Volume[] = [];
        const settled = await Promise.allSettled(
          step.calls.map(async (c) => {
            if (c.startAfterMs !== undefined) await delay(c.startAfterMs);
            return this.call(c, deleted);
          }),
        );
        const failure = settled.find((s) => s.status === 'rejected');
        if (failure) throw failure.reason;
        // Only now, with every call of the step answered: a create beside the delete may
        // rightly have been given the path the delete had just freed.
        for (const volume of deleted)
          if (isDirectory(volume.path!) && !this.book.claimedByOther(volume)) this.reportLeft(volume);
        break;
      }
      case 'restart': {
        const restored = await Promise.allSettled(
          this.book.live().map((v) => this.call({ kind: 'restore', volume: v.key })),
        );
        const failure = restored.find((s) => s.status === 'rejected');
        if (failure) throw failure.reason;
        break;
      }
      case 'fill':
        for (let i = 0; i < step.count; i++)
          await this.call({
            kind: 'create',
            volume: { namespace: 'default', name: `${LONG_STEM}${++this.fillCount}` },
            large: false,
          });
        break;
      case 'fingerprint':
        this.calls++;
        await this.agent.fingerprint(this.book.live().length);
        break;
      case 'write':
        this.writeData(this.book.get(step.volume)!);
        break;
      case 'volumes-dir':
        this.condition = await volumesDirUnder(step.condition, this.root);
        this.volumesDir = this.condition.dir;
        break;
      default:
        await this.call(step);
    }
    await this.checkVolumes();
  }

  /** Fingerprints, restarts, deletes every volume the agent still knows, then looks for what is left. */
  async finish(): Promise<void> {
    // Every run ends as a node's life goes on: a fingerprint with as many volumes as it made,
    // an agent restart, the next restart (its restores show what the plugin kept of the
    // first: a record lost while every volume was restored at once), then every volume
    // deleted. A replay ends the same way, so these steps are not part of the recipe.
    this.ending = true;
    try {
      const restarts = this.endWith === 'full' ? 2 : 0;
      if (restarts > 0 && this.book.live().length > 0) await this.run({ kind: 'fingerprint' });
      for (let i = 0; i < restarts && this.book.live().length > 0; i++) await this.run({ kind: 'restart' });
      for (const volume of [...this.book.volumes.values()]) await this.run({ kind: 'delete', volume: volume.key });
    } catch (err) {
      if (err instanceof Violation) err.message += ` ${this.endWith === 'full' ? AT_THE_END : DELETES_AT_THE_END}`;
      throw err;
    }
    const { everMade } = this.book;
    const names = new Set(everMade.flatMap((v) => [v.request.volumeId, v.request.volumeName]));
    const left = [
      ...existing(everMade.flatMap((v) => (v.path === undefined ? [] : [v.path]))),
      ...namedBelow(this.volumesDir, names),
    ];
    if (left.length > 0)
      this.report(
        new Violation(
          'explore.nothing-left',
          `after every volume was deleted, still there: ${[...new Set(left)].slice(0, 4).join(', ')} ${AT_THE_END}`,
        ),
      );
  }

  /** Best effort, after a run however it ended: deletes the volumes the agent still knows, then removes the volumes dir. */
  async discard(): Promise<string[]> {
    await this.crowded.end();
    for (const volume of this.book.volumes.values()) {
      await this.ctx.delete(deleteRequest(volume.request, volume.path ?? '')).catch(() => undefined);
    }
    return forceRemove(this.root);
  }

  /**
   * `beside`: given when other calls run at once with this one. A delete's folder still
   * there without the volume's own data may then be a create's beside it; it is pushed
   * there, to be judged when they have all answered.
   */
  private async call(call: VolumeCall, beside?: Volume[]): Promise<void> {
    this.calls++;
    try {
      await this.callOnce(call, beside);
    } catch (err) {
      if (err instanceof Violation) err.call ??= call;
      throw err;
    }
  }

  private async callOnce(call: VolumeCall, beside?: Volume[]): Promise<void> {
    const label = formatVolume(call.volume);
    switch (call.kind) {
      case 'create': {
        // A create after a killed one is the agent's retry of the same volume.
        const known = this.book.get(call.volume);
        const volume = known ?? this.newVolume(call.volume, call.large, call.parameters);
        const path = await this.agent.create(volume.request, `create of ${label}`, { timed: known === undefined });
        this.becomeLive(volume, path, label);
        return;
      }
      case 'kill-create':
        return this.killedCreate(call.volume, call.killAt ?? call.killAtMs);
      case 'restore': {
        const volume = this.book.get(call.volume)!;
        const path = call.crowded
          ? await this.crowded.restore(this.agent, volume.request, label)
          : await this.agent.create(
              restoreRequest(volume.request),
              `restore of ${label} (its saved create request again)`,
            );
        if (path !== volume.path)
          throw new Violation(
            'explore.volumes-survive',
            `the restore of ${label} returned ${path}, but it was created at ${volume.path}: the agent mounts an empty volume`,
          );
        return;
      }
      case 'delete': {
        const volume = this.book.get(call.volume)!;
        // Before it is answered: a create beside it may be answered first.
        this.book.deleted.add(volume.request.volumeId);
        await this.agent.delete(deleteRequest(volume.request, volume.path ?? ''), `delete of ${label}`);
        this.book.forget(volume);
        this.judgeReleased(volume, `delete of ${label}`);
        if (volume.path === undefined || !isDirectory(volume.path)) return;
        // Its own data still there is left behind whatever runs beside it.
        if (beside !== undefined && markerIn(volume.path) !== volume.request.volumeId) beside.push(volume);
        else if (!this.book.claimedByOther(volume)) this.reportLeft(volume);
        return;
      }
      case 'cleanup-delete': {
        const volume = this.book.get(call.volume)!;
        await this.agent.delete(
          cleanupDeleteRequest(volume.request),
          `cleanup delete of ${label} (empty name and namespace)`,
        );
        this.book.forget(volume);
        this.judgeReleased(volume, `cleanup delete of ${label}`);
        return;
      }
    }
  }

  /**
   * A create killed `killAtMs` after it started (KILL_AFTER_MS when not given), then the
   * agent's next create of the volume, with the same request: it must not be blocked. That
   * one is made whether or not the first answered in time (then it is a restore's create),
   * so that a seed makes the same calls however loaded the machine is.
   */
  private async killedCreate(key: VolumeKey, killAt: number | KillEvent | undefined): Promise<void> {
    const label = formatVolume(key);
    const volume = this.newVolume(key, false);
    volume.state = 'uncertain';
    const { run, killed } = await this.agent.killedCreate(volume.request, killAt);
    const when =
      killAt === undefined ? '' : ` at ${typeof killAt === 'string' ? `its first ${killAt}` : `${killAt} ms`}`;
    const first = killed ? `one was killed${when}` : succeeded(run) ? 'one that answered' : 'one that failed';
    this.calls++;
    this.becomeLive(volume, await this.agent.create(volume.request, `create of ${label} after ${first}`), label);
  }

  /** VOLUME_DATA's files, beside the marker; a volume outside the sandbox is left as it is. */
  private writeData(volume: Volume): void {
    if (volume.unmarked) return;
    const content = 'x'.repeat(VOLUME_DATA.bytes);
    for (let i = 0; i < VOLUME_DATA.files; i++)
      writeInsideSandbox(this.ctx.sandboxScope, volume.path!, `data-${i}`, content);
  }

  private newVolume(key: VolumeKey, large: boolean, parameters?: Record<string, string>): Volume {
    const { capacityMin, capacityMax } = this.ctx.settings;
    const bound = capacityBound(this.ctx.settings);
    const wanted = capacityMin > 0n ? capacityMin * 2n : 32n * MiB;
    const bigger = wanted < bound ? wanted : bound;
    const request = this.ctx.newVolume({
      volumesDir: this.volumesDir,
      volumeName: key.name,
      namespace: key.namespace,
      volumeId: volumeUuid(this.runNumber, ++this.volumeCount),
      ...(parameters === undefined ? {} : { parameters: { ...this.ctx.settings.parameters, ...parameters } }),
      ...(large
        ? {
            capacityMinBytes: bigger,
            capacityMaxBytes: capacityMax > 0n && capacityMax < bigger ? bigger : capacityMax,
          }
        : {}),
    });
    const volume: Volume = { key, request, state: 'uncertain' };
    this.book.add(volume);
    return volume;
  }

  private becomeLive(volume: Volume, path: string, label: string): void {
    volume.path = path;
    volume.state = 'live';
    if (!isDirectory(path))
      throw new Violation('explore.calls-succeed', `the create of ${label} returned ${path}, which is not a directory`);
    // A deleted volume's data in a new volume's folder: its delete left it, whichever of the
    // two calls (run at once) was answered first. A live one's is judged by checkVolumes.
    const found = markerIn(path);
    const owner = found === undefined ? undefined : this.book.everMade.find((v) => v.request.volumeId === found);
    if (owner !== undefined && owner !== volume && this.book.deleted.has(found!)) this.reportLeft(owner, label);
    try {
      writeInsideSandbox(this.ctx.sandboxScope, path, MARKER_FILE, volume.request.volumeId);
      volume.unmarked = false;
    } catch (err) {
      if (!(err instanceof OutsideSandboxError)) throw err;
      volume.unmarked = true;
    }
  }

  /** What the session's look found the delete left on the host (loop devices, mounts), already released by it. */
  private judgeReleased(volume: Volume, what: string): void {
    const held = this.ctx.leftovers.filter(
      (l) => l.volumeId === volume.request.volumeId && l.after === 'delete' && l.kind !== 'folder',
    );
    if (held.length > 0)
      throw new Violation('explore.releases-host-resources', `the ${what}: ${held.map((l) => l.message).join('; ')}`);
  }

  /** A delete that succeeded but left the volume's folder (`reusedBy`: and a later create was given it). */
  private reportLeft(volume: Volume, reusedBy?: string): void {
    const label = formatVolume(volume.key);
    const reused = reusedBy === undefined ? '' : `, with its data, and the create of ${reusedBy} was given it`;
    this.report(
      new Violation(
        'explore.nothing-left',
        `the delete of ${label} succeeded but left ${volume.path} in place${reused}`,
      ),
    );
  }

  /** The model: every live volume's path is a directory of its own, and holds what was written into it. */
  private async checkVolumes(): Promise<void> {
    const harmed = await this.condition?.harm();
    if (harmed !== undefined) throw new Violation('explore.volumes-survive', harmed);
    const live = this.book.live();
    for (const [i, a] of live.entries()) {
      for (const b of live.slice(i + 1)) {
        if (a.path === b.path || isStrictlyInside(a.path!, b.path!) || isStrictlyInside(b.path!, a.path!))
          throw new Violation(
            'explore.volumes-distinct',
            `${formatVolume(a.key)} and ${formatVolume(b.key)} share storage: ${a.path} and ${b.path}`,
          );
      }
    }
    for (const volume of live) {
      const label = formatVolume(volume.key);
      if (!isDirectory(volume.path!))
        throw new Violation('explore.volumes-survive', `${label}'s path ${volume.path} is gone`);
      const marker = markerIn(volume.path!);
      if (!volume.unmarked && marker !== volume.request.volumeId)
        throw new Violation(
          'explore.volumes-survive',
          `the data written into ${label} (${MARKER_FILE} in ${volume.path}) is ${marker === undefined ? 'gone' : 'changed'}`,
        );
    }
  }

  private report(violation: Violation): void {
    if (violation.checkId !== RECOMMENDED_EXPLORE_CHECK || this.stopAtCosmetic) throw violation;
    this.cosmetic ??= { violation, steps: [...this.history] };
  }
}

/** Volume IDs are UUIDs, as the agent's are; made from counters so that a replay sends the same ones. */
function volumeUuid(run: number, volume: number): string {
  const hex = (n: number, width: number) => n.toString(16).padStart(width, '0');
  return `${hex(run, 8)}-d4c0-4000-8000-${hex(volume, 12)}`;
}
