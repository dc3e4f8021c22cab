import type { CreateInput } from '../types.js';
import { MAX_FILL } from './pool.js';
import type { Pick, Step, VolumeCall, VolumeKey } from './recipe.js';

/** More live volumes than this make every step slow and say nothing new. */
export const MAX_LIVE = MAX_FILL + 2;

export interface Volume {
  key: VolumeKey;
  request: CreateInput;
  /** `uncertain` while no create has answered for it (a killed one). */
  state: 'live' | 'uncertain';
  /** Where its create put it; undefined while no create has answered. */
  path?: string;
  /** Its path lies outside the sandbox, so no marker was written into it (dhv check writes only inside). */
  unmarked?: boolean;
}

/**
 * The volumes the agent believes exist, every one a run made, and which steps make sense
 * on them: the agent never restores a volume it does not know, and a pick aims a step at
 * the volumes the call makes sense on.
 */
export class VolumeBook {
  readonly volumes = new Map<string, Volume>();
  readonly everMade: Volume[] = [];
  /** The volume IDs whose delete was made (a failed one ends the run). */
  readonly deleted = new Set<string>();

  get(key: VolumeKey): Volume | undefined {
    return this.volumes.get(keyOf(key));
  }

  add(volume: Volume): void {
    this.volumes.set(keyOf(volume.key), volume);
    this.everMade.push(volume);
  }

  forget(volume: Volume): void {
    this.volumes.delete(keyOf(volume.key));
  }

  live(): Volume[] {
    return [...this.volumes.values()].filter((v) => v.state === 'live');
  }

  /** Whether another live volume was given this one's path. */
  claimedByOther(volume: Volume): boolean {
    return this.live().some((v) => v !== volume && v.path === volume.path);
  }

  /**
   * The step with its picks turned into names, or undefined when it cannot run now: a
   * pick aims at the volumes the call makes sense on (a delete at those the agent knows,
   * a restore at live ones, a create at the retry of a killed one or the reuse of a deleted
   * name), and the calls of one step at different volumes.
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
    if (step.kind === 'restart' || step.kind === 'fill' || step.kind === 'fingerprint' || step.kind === 'volumes-dir')
      return this.canRun(step) ? step : undefined;
    if (step.kind === 'write') {
      const { volume } = step;
      return !('pick' in volume) && this.canRun({ kind: 'write', volume }) ? { kind: 'write', volume } : undefined;
    }
    return this.resolveCall(step, new Set());
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
      case 'volumes-dir':
        return this.everMade.length === 0;
      case 'create':
        return this.get(step.volume)?.state !== 'live';
      case 'kill-create':
        return !this.volumes.has(keyOf(step.volume));
      case 'delete':
        return this.volumes.has(keyOf(step.volume));
      case 'restore':
      case 'cleanup-delete':
      case 'write':
        return this.get(step.volume)?.state === 'live';
    }
  }

  /** Of calls run at once, those that can run now, each volume once. */
  possibleCalls(calls: readonly VolumeCall[]): VolumeCall[] {
    const possible: VolumeCall[] = [];
    for (const call of calls)
      if (this.canRun(call) && !possible.some((c) => keyOf(c.volume) === keyOf(call.volume))) possible.push(call);
    return possible;
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

  /** Names whose volumes were deleted and that no volume holds now: ready to be used again. */
  private deletedNames(): VolumeKey[] {
    const seen = new Map(this.everMade.map((v) => [keyOf(v.key), v.key]));
    return [...seen].filter(([key]) => !this.volumes.has(key)).map(([, key]) => key);
  }
}

/** Why a step cannot run now. */
export function whyNot(step: Step): string {
  if (step.kind === 'restart') return 'no volume is live';
  if (step.kind === 'together') return 'one of its calls cannot';
  if (step.kind === 'volumes-dir') return 'the volumes dir is chosen before any volume is made';
  if (step.kind === 'create' || step.kind === 'kill-create') return 'the volume already exists';
  return 'no such volume';
}

function keyOf(key: VolumeKey): string {
  return `${key.namespace}/${key.name}`;
}
