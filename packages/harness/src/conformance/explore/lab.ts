import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { isStrictlyInside } from '@dhv/sdk';
import { buildEnvironment, PluginError } from '@dhv/sdk/client';
import { AGENT_TIMEOUT_MS } from '@dhv/sdk/plugin';
import { describeRun, stderrBeyond, succeeded } from '../raw-run.js';
import { forceRemove } from '../scratch-dirs.js';
import { capacityBound } from '../space-budget.js';
import { OutsideSandboxError, writeInsideSandbox } from '../sandbox-writes.js';
import type { CheckContext, CreateInput } from '../types.js';
import { LONG_STEM, MAX_FILL } from './pool.js';
import { formatStep, formatVolume, type Pick, type Step, type VolumeCall, type VolumeKey } from './recipe.js';
import { RECOMMENDED_EXPLORE_CHECK, type ExploreCheckId } from './verdicts.js';

/** A create is killed this long after it starts: "at its deadline", without waiting the agent's 60 s. */
export const KILL_AFTER_MS = 300;
/** A slow fingerprint is measured this often before it counts: one slow run on a busy host proves nothing. */
const FINGERPRINT_TRIES = 3;
/** The file written into every volume after its create; it must survive everything but the volume's own delete. */
export const MARKER_FILE = '.dhv-explore-marker';
const MiB = 1024n * 1024n;
/** More live volumes than this make every step slow and say nothing new. */
export const MAX_LIVE = MAX_FILL + 2;

/** Said of a break found in the steps every run ends with. */
export const AT_THE_END = '(in the steps every run ends with: a fingerprint, two restarts, the delete of every volume)';

/** A break of the model of what Nomad needs, found at a step. */
export class Violation extends Error {
  constructor(
    readonly checkId: ExploreCheckId,
    message: string,
  ) {
    super(message);
  }
}

/** A step the recipe asks for that the volumes' state does not allow (restore of a volume never created). */
export class StepNotPossible extends Error {}

type VolumeState = 'live' | 'uncertain';

interface Volume {
  key: VolumeKey;
  request: CreateInput;
  state: VolumeState;
  /** Where its create put it; undefined while no create has answered. */
  path?: string;
  /** Its path lies outside the sandbox, so no marker was written into it (dhv check writes only inside). */
  unmarked?: boolean;
}

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
  private readonly volumes = new Map<string, Volume>();
  private readonly everMade: Volume[] = [];
  /** The volume IDs whose delete was made (a failed one ends the run). */
  private readonly deleted = new Set<string>();
  private volumeCount = 0;
  /** In the steps every run ends with, which the history leaves out. */
  private ending = false;
  private fillCount = 0;

  constructor(
    private readonly ctx: CheckContext,
    readonly volumesDir: string,
    private readonly runNumber: number,
    /** Whether a cosmetic break ends the run (when it is the one being shrunk). */
    private readonly stopAtCosmetic = false,
  ) {}

  /**
   * The step with its picks turned into names, or undefined when it cannot run now: a
   * pick aims at the volumes the call makes sense on (a delete at those the agent knows,
   * a restore at live ones, a create at the retry of a killed one or the reuse of a deleted
   * name), and the calls of one
   * step at different volumes.
   */
  resolve(step: Step<VolumeKey | Pick>): Step | undefined {
    if (step.kind === 'together') {
      const calls: VolumeCall[] = [];
      for (const call of step.calls) {
        const taken = new Set(calls.map((c) => keyOf(c.volume)));
        const resolved = this.resolveCall(call, taken);
        if (resolved === undefined) return undefined;
        calls.push(resolved);
      }
      return { kind: 'together', calls };
    }
    if (step.kind === 'restart' || step.kind === 'fill' || step.kind === 'fingerprint')
      return this.canRun(step) ? step : undefined;
    return this.resolveCall(step, new Set());
  }

  private resolveCall(call: VolumeCall<VolumeKey | Pick>, taken: Set<string>): VolumeCall | undefined {
    let volume: VolumeKey | undefined;
    if ('pick' in call.volume) {
      const known = [...this.volumes.values()];
      const candidates = (
        call.kind === 'create'
          ? [...known.filter((v) => v.state === 'uncertain').map((v) => v.key), ...this.deletedNames()]
          : known.filter((v) => call.kind === 'delete' || v.state === 'live').map((v) => v.key)
      ).filter((key) => !taken.has(keyOf(key)));
      if (candidates.length === 0) return undefined;
      volume = candidates[call.volume.pick % candidates.length]!;
    } else volume = call.volume;
    if (taken.has(keyOf(volume))) return undefined;
    const resolved = { ...call, volume } as VolumeCall;
    return this.canRun(resolved) ? resolved : undefined;
  }

  /** Whether the step makes sense now: the agent never restores a volume it does not know. */
  canRun(step: Step): boolean {
    switch (step.kind) {
      case 'together':
        return step.calls.every((c) => this.canRun(c));
      case 'restart':
        return this.live().length > 0;
      case 'fill':
        return this.live().length + step.count <= MAX_LIVE;
      case 'fingerprint':
        return true;
      case 'create':
        return this.volumes.get(keyOf(step.volume))?.state !== 'live';
      case 'kill-create':
        return !this.volumes.has(keyOf(step.volume));
      case 'delete':
        return this.volumes.has(keyOf(step.volume));
      case 'restore':
      case 'cleanup-delete':
        return this.volumes.get(keyOf(step.volume))?.state === 'live';
    }
  }

  /**
   * The step, or as much of it as the volumes' state allows (of calls run at once, those
   * that can run; none, and nothing is run): a recipe with steps dropped from it may aim
   * a later step at a volume that no longer exists.
   */
  async runWherePossible(step: Step): Promise<void> {
    if (step.kind !== 'together') return this.canRun(step) ? this.run(step) : undefined;
    const calls: VolumeCall[] = [];
    for (const call of step.calls)
      if (this.canRun(call) && !calls.some((c) => keyOf(c.volume) === keyOf(call.volume))) calls.push(call);
    if (calls.length > 1) return this.run({ kind: 'together', calls });
    if (calls.length === 1) return this.run(calls[0]!);
  }

  async run(step: Step): Promise<void> {
    if (!this.canRun(step)) throw new StepNotPossible(`"${formatStep(step)}" cannot run: ${whyNot(step)}`);
    if (!this.ending) this.history.push(step);
    switch (step.kind) {
      case 'together': {
        const deleted: Volume[] = [];
        const settled = await Promise.allSettled(step.calls.map((c) => this.call(c, deleted)));
        const failure = settled.find((s) => s.status === 'rejected');
        if (failure) throw failure.reason;
        // Only now, with every call of the step answered: a create beside the delete may
        // rightly have been given the path the delete had just freed.
        for (const volume of deleted)
          if ((await isDirectory(volume.path!)) && !this.claimedByOther(volume)) this.reportLeft(volume);
        break;
      }
      case 'restart': {
        const restored = await Promise.allSettled(
          this.live().map((v) => this.call({ kind: 'restore', volume: v.key })),
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
        await this.fingerprint();
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
      if (this.live().length > 0) await this.run({ kind: 'fingerprint' });
      for (let i = 0; i < 2 && this.live().length > 0; i++) await this.run({ kind: 'restart' });
      for (const volume of [...this.volumes.values()]) await this.run({ kind: 'delete', volume: volume.key });
    } catch (err) {
      if (err instanceof Violation) err.message += ` ${AT_THE_END}`;
      throw err;
    }
    const names = new Set(this.everMade.flatMap((v) => [v.request.volumeId, v.request.volumeName]));
    const left = [
      ...(await existing(this.everMade.flatMap((v) => (v.path === undefined ? [] : [v.path])))),
      ...(await namedBelow(this.volumesDir, names)),
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
    for (const volume of this.volumes.values()) {
      await this.ctx.delete(this.ctx.deleteRequest(volume.request, volume.path ?? '')).catch(() => undefined);
    }
    return forceRemove(this.volumesDir);
  }

  /** Names whose volumes were deleted and that no volume holds now: ready to be used again. */
  private deletedNames(): VolumeKey[] {
    const seen = new Map(this.everMade.map((v) => [keyOf(v.key), v.key]));
    return [...seen].filter(([key]) => !this.volumes.has(key)).map(([, key]) => key);
  }

  private live(): Volume[] {
    return [...this.volumes.values()].filter((v) => v.state === 'live');
  }

  /**
   * `beside`: given when other calls run at once with this one. A delete's folder still
   * there without the volume's own data may then be a create's beside it; it is pushed
   * there, to be judged when they have all answered.
   */
  private async call(call: VolumeCall, beside?: Volume[]): Promise<void> {
    this.calls++;
    const key = keyOf(call.volume);
    const label = formatVolume(call.volume);
    switch (call.kind) {
      case 'create': {
        const known = this.volumes.get(key);
        // A create after a killed one is the agent's retry of the same volume.
        const volume = known ?? this.newVolume(call.volume, call.large);
        const path = await this.create(volume.request, `create of ${label}`);
        await this.becomeLive(volume, path, label);
        return;
      }
      case 'kill-create': {
        const volume = this.newVolume(call.volume, false);
        volume.state = 'uncertain';
        const run = await this.ctx.runRaw(['create'], buildEnvironment('create', volume.request, this.ctx.plugin), {
          timeoutMs: KILL_AFTER_MS,
        });
        // The agent's next create of the volume, with the same request: it must not be blocked.
        // Made whether or not the first answered in time (then it is a restore's create), so
        // that a seed makes the same calls however loaded the machine is.
        const first = run.timedOut ? 'one was killed' : succeeded(run) ? 'one that answered' : 'one that failed';
        return this.becomeLive(volume, await this.create(volume.request, `create of ${label} after ${first}`), label);
      }
      case 'restore': {
        const volume = this.volumes.get(key)!;
        const path = await this.create(volume.request, `restore of ${label} (its saved create request again)`);
        if (path !== volume.path)
          throw new Violation(
            'explore.volumes-survive',
            `the restore of ${label} returned ${path}, but it was created at ${volume.path}: the agent mounts an empty volume`,
          );
        return;
      }
      case 'delete': {
        const volume = this.volumes.get(key)!;
        // Before it is answered: a create beside it may be answered first.
        this.deleted.add(volume.request.volumeId);
        await this.delete(volume, volume.path ?? '', `delete of ${label}`);
        this.volumes.delete(key);
        this.judgeReleased(volume, `delete of ${label}`);
        if (volume.path === undefined || !(await isDirectory(volume.path))) return;
        // Its own data still there is left behind whatever runs beside it.
        if (beside !== undefined && (await markerIn(volume.path)) !== volume.request.volumeId) beside.push(volume);
        else if (!this.claimedByOther(volume)) this.reportLeft(volume);
        return;
      }
      case 'cleanup-delete': {
        const volume = this.volumes.get(key)!;
        await this.delete(volume, this.volumesDir, `cleanup delete of ${label} (empty name and namespace)`, true);
        this.volumes.delete(key);
        this.judgeReleased(volume, `cleanup delete of ${label}`);
        return;
      }
    }
  }

  private newVolume(key: VolumeKey, large: boolean): Volume {
    const { capacityMin, capacityMax } = this.ctx.settings;
    const bound = capacityBound(this.ctx.settings);
    const wanted = capacityMin > 0n ? capacityMin * 2n : 32n * MiB;
    const bigger = wanted < bound ? wanted : bound;
    const request = this.ctx.newVolume({
      volumesDir: this.volumesDir,
      volumeName: key.name,
      namespace: key.namespace,
      volumeId: volumeUuid(this.runNumber, ++this.volumeCount),
      ...(large
        ? {
            capacityMinBytes: bigger,
            capacityMaxBytes: capacityMax > 0n && capacityMax < bigger ? bigger : capacityMax,
          }
        : {}),
    });
    const volume: Volume = { key, request, state: 'uncertain' };
    this.volumes.set(keyOf(key), volume);
    this.everMade.push(volume);
    return volume;
  }

  private async becomeLive(volume: Volume, path: string, label: string): Promise<void> {
    volume.path = path;
    volume.state = 'live';
    if (!(await isDirectory(path)))
      throw new Violation('explore.calls-succeed', `the create of ${label} returned ${path}, which is not a directory`);
    // A deleted volume's data in a new volume's folder: its delete left it, whichever of the
    // two calls (run at once) was answered first. A live one's is judged by checkVolumes.
    const found = await markerIn(path);
    const owner = found === undefined ? undefined : this.everMade.find((v) => v.request.volumeId === found);
    if (owner !== undefined && owner !== volume && this.deleted.has(found!)) this.reportLeft(owner, label);
    try {
      await writeInsideSandbox(this.ctx.sandboxScope, path, MARKER_FILE, volume.request.volumeId);
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

  private async create(request: CreateInput, what: string): Promise<string> {
    try {
      return (await this.ctx.create(request)).path;
    } catch (err) {
      if (err instanceof PluginError) throw callFailed(what, err);
      throw err;
    }
  }

  private async delete(volume: Volume, createdPath: string, what: string, cleanup = false): Promise<void> {
    const request = this.ctx.deleteRequest(volume.request, createdPath);
    try {
      await this.ctx.delete(cleanup ? { ...request, volumeName: '', namespace: '' } : request);
    } catch (err) {
      if (err instanceof PluginError) throw callFailed(what, err);
      throw err;
    }
  }

  private async fingerprint(): Promise<void> {
    this.calls++;
    const env = buildEnvironment('fingerprint', {}, this.ctx.plugin);
    const seen: string[] = [];
    for (let i = 0; i < FINGERPRINT_TRIES; i++) {
      const run = await this.ctx.runRaw(['fingerprint'], env, { timeoutMs: AGENT_TIMEOUT_MS.fingerprint });
      if (succeeded(run) && run.durationMs <= AGENT_TIMEOUT_MS.fingerprint) return;
      seen.push(run.timedOut ? `killed at ${AGENT_TIMEOUT_MS.fingerprint} ms` : describeRun(run));
    }
    throw new Violation(
      'explore.fingerprint-fast',
      `with ${this.live().length} volumes, fingerprint did not answer within the agent's ${AGENT_TIMEOUT_MS.fingerprint} ms (${seen.join('; ')}): the agent skips the plugin`,
    );
  }

  private claimedByOther(volume: Volume): boolean {
    return this.live().some((v) => v !== volume && v.path === volume.path);
  }

  /** The model: every live volume's path is a directory of its own, and holds what was written into it. */
  private async checkVolumes(): Promise<void> {
    const live = this.live();
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
      if (!(await isDirectory(volume.path!)))
        throw new Violation('explore.volumes-survive', `${label}'s path ${volume.path} is gone`);
      const marker = await markerIn(volume.path!);
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

/** A call that failed, in Nomad's words, then what the plugin itself said last on stderr. */
function callFailed(what: string, err: PluginError): Violation {
  const said = stderrBeyond(err.stderr, err.nomadMessage);
  const stderr = said ? ` (the plugin's stderr ended: ${said})` : '';
  return new Violation('explore.calls-succeed', `the ${what} failed: ${err.nomadMessage}${stderr}`);
}

function whyNot(step: Step): string {
  if (step.kind === 'restart') return 'no volume is live';
  if (step.kind === 'together') return 'one of its calls cannot';
  if (step.kind === 'create' || step.kind === 'kill-create') return 'the volume already exists';
  return 'no such volume';
}

function keyOf(key: VolumeKey): string {
  return `${key.namespace}/${key.name}`;
}

/** Volume IDs are UUIDs, as the agent's are; made from counters so that a replay sends the same ones. */
function volumeUuid(run: number, volume: number): string {
  const hex = (n: number, width: number) => n.toString(16).padStart(width, '0');
  return `${hex(run, 8)}-d4c0-4000-8000-${hex(volume, 12)}`;
}

async function isDirectory(path: string): Promise<boolean> {
  return stat(path).then(
    (s) => s.isDirectory(),
    () => false,
  );
}

/** What the marker file in `dir` says (the ID of the volume it was written into), if there is one. */
async function markerIn(dir: string): Promise<string | undefined> {
  return readFile(join(dir, MARKER_FILE), 'utf8').catch(() => undefined);
}

async function existing(paths: string[]): Promise<string[]> {
  const found = await Promise.all(paths.map(async (p) => ((await isDirectory(p)) ? [p] : [])));
  return found.flat();
}

/** Entries at most three levels below `dir` named exactly like one of `names` (a volume's ID or name). */
async function namedBelow(dir: string, names: Set<string>, depth = 3): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const found: string[] = [];
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (names.has(entry.name)) found.push(path);
    else if (entry.isDirectory() && depth > 1) found.push(...(await namedBelow(path, names, depth - 1)));
  }
  return found;
}
