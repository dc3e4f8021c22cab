import { KILL_EVENTS, type KillEvent } from './kill-events.js';

/**
 * The steps of an exploration, in the words of a replay recipe: one step per agent
 * action, separated by `;`, calls run at once joined by `+`. A volume is written as its
 * name, prefixed with its namespace when that is not `default` (`prod/db`).
 *
 *   create db; create db-backup large; delete db; restart; fill 10; fingerprint
 */

/**
 * A call on one volume. `large`: a create with more than the default capacity;
 * `parameters`: given to the create beside the user's (`create db mode=0700`); `killAtMs`:
 * when a killed create is killed (`kill-create db at 900ms`; KILL_AFTER_MS when not given);
 * `startAfterMs`: of calls run at once, how long after the others this one starts
 * (`delete db + create web after 40ms`); `crowded`: a restore run under a mount table crowded
 * as a real client's is (`restore db crowded`, crowded-table.ts); `killAt`: a killed create
 * killed at the first sign of a step of its own (kill-events.ts: `kill-create db at rename`),
 * not at a time. Generated steps may aim at "the n-th volume the
 * agent knows" (a Pick) instead of a name, so that deletes and restores mostly hit live
 * volumes; a step is resolved to names before it runs.
 */
export type VolumeCall<V = VolumeKey> = (
  | { kind: 'create'; volume: V; large: boolean; parameters?: Record<string, string> }
  | { kind: 'restore'; volume: V; crowded?: boolean }
  | { kind: 'delete'; volume: V }
  | { kind: 'cleanup-delete'; volume: V }
  | { kind: 'kill-create'; volume: V; killAtMs?: number; killAt?: KillEvent }
) & { startAfterMs?: number };

export type Step<V = VolumeKey> =
  | VolumeCall<V>
  /** Several calls on different volumes, started at once. */
  | { kind: 'together'; calls: VolumeCall<V>[] }
  /** An agent restart: every live volume restored at once. */
  | { kind: 'restart' }
  /** `count` new volumes, one after another, as a busy node has. */
  | { kind: 'fill'; count: number }
  | { kind: 'fingerprint' }
  /** Files written into a live volume (VOLUME_DATA), as a workload fills it: a delete then has data to remove. */
  | { kind: 'write'; volume: V }
  /** The run's volumes dir made under a host condition (host-conditions.ts), before any volume: `volumes-dir long`. */
  | { kind: 'volumes-dir'; condition: VolumesDirCondition };

/** The `index`-th (modulo their number) of the volumes a call can aim at. */
export interface Pick {
  pick: number;
}

export interface VolumeKey {
  namespace: string;
  name: string;
}

/** The host conditions a run's volumes dir can be made under (host-conditions.ts). */
export const VOLUMES_DIR_CONDITIONS = ['long', 'other-fs', 'shared'] as const;
export type VolumesDirCondition = (typeof VOLUMES_DIR_CONDITIONS)[number];

const DEFAULT_NAMESPACE = 'default';
const CALL_KINDS = ['create', 'restore', 'delete', 'cleanup-delete', 'kill-create'] as const;
const STEP_WORDS = [...CALL_KINDS, 'write', 'restart', 'fill N', 'fingerprint', 'volumes-dir CONDITION'];

export class RecipeError extends Error {}

export function formatVolume(volume: VolumeKey): string {
  return volume.namespace === DEFAULT_NAMESPACE ? volume.name : `${volume.namespace}/${volume.name}`;
}

export function formatStep(step: Step): string {
  switch (step.kind) {
    case 'together':
      return step.calls.map(formatStep).join(' + ');
    case 'restart':
    case 'fingerprint':
      return step.kind;
    case 'fill':
      return `fill ${step.count}`;
    case 'create':
      return `create ${formatVolume(step.volume)}${step.large ? ' large' : ''}${formatParameters(step.parameters)}${after(step)}`;
    case 'kill-create':
      return `kill-create ${formatVolume(step.volume)}${killPoint(step)}${after(step)}`;
    case 'volumes-dir':
      return `volumes-dir ${step.condition}`;
    case 'write':
      return `write ${formatVolume(step.volume)}`;
    case 'restore':
      return `restore ${formatVolume(step.volume)}${step.crowded ? ' crowded' : ''}${after(step)}`;
    default:
      return `${step.kind} ${formatVolume(step.volume)}${after(step)}`;
  }
}

function killPoint(call: VolumeCall & { kind: 'kill-create' }): string {
  if (call.killAt !== undefined) return ` at ${call.killAt}`;
  return call.killAtMs === undefined ? '' : ` at ${call.killAtMs}ms`;
}

const after = (call: VolumeCall) => (call.startAfterMs === undefined ? '' : ` after ${call.startAfterMs}ms`);

/** Each `key=value`, both URI-encoded so that a value with a space or a `;` stays one word of the recipe. */
function formatParameters(parameters: Record<string, string> | undefined): string {
  return Object.entries(parameters ?? {})
    .map(([k, v]) => ` ${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
    .join('');
}

export function formatRecipe(steps: readonly Step[]): string {
  return steps.map(formatStep).join('; ');
}

export function parseRecipe(recipe: string): Step[] {
  const steps = recipe
    .split(';')
    .map((s) => s.trim())
    .filter(Boolean)
    .map(parseStep);
  if (steps.length === 0) throw new RecipeError('the replay recipe has no steps, e.g. "create db; delete db"');
  return steps;
}

function parseStep(text: string): Step {
  const parts = text.split('+').map((s) => s.trim());
  if (parts.length > 1) {
    const calls = parts.map(parseCall);
    const keys = calls.map((c) => formatVolume(c.volume));
    if (new Set(keys).size !== keys.length)
      throw new RecipeError(`"${text}": calls run at once must be on different volumes`);
    return { kind: 'together', calls };
  }
  const words = text.split(/\s+/);
  if (words[0] === 'restart' || words[0] === 'fingerprint') {
    if (words.length > 1) throw new RecipeError(`"${text}": ${words[0]} takes nothing after it`);
    return { kind: words[0] };
  }
  if (words[0] === 'fill') {
    const count = Number(words[1]);
    if (words.length !== 2 || !Number.isInteger(count) || count < 1)
      throw new RecipeError(`"${text}": fill takes a number of volumes, e.g. "fill 10"`);
    return { kind: 'fill', count };
  }
  if (words[0] === 'volumes-dir') {
    const condition = VOLUMES_DIR_CONDITIONS.find((c) => c === words[1]);
    if (words.length !== 2 || condition === undefined)
      throw new RecipeError(`"${text}": volumes-dir takes one of ${VOLUMES_DIR_CONDITIONS.join(', ')}`);
    return { kind: 'volumes-dir', condition };
  }
  if (words[0] === 'write') {
    if (words.length !== 2) throw new RecipeError(`"${text}": give one volume name, e.g. "write db"`);
    return { kind: 'write', volume: parseVolume(words[1]!, text) };
  }
  const call = parseCall(text);
  if (call.startAfterMs !== undefined)
    throw new RecipeError(
      `"${text}": "after" delays one of calls run at once, e.g. "delete db + create web after 40ms"`,
    );
  return call;
}

function parseCall(text: string): VolumeCall {
  const words = text.split(/\s+/);
  const kind = CALL_KINDS.find((k) => k === words[0]);
  if (kind === undefined) throw new RecipeError(`"${text}": unknown step; steps are ${STEP_WORDS.join(', ')}`);
  const startAfterMs = takeMs(words, 'after', text);
  const killAt = kind === 'kill-create' ? takeKillEvent(words) : undefined;
  const killAtMs = kind === 'kill-create' && killAt === undefined ? takeMs(words, 'at', text) : undefined;
  const timing = startAfterMs === undefined ? {} : { startAfterMs };
  if (words.length < 2) throw new RecipeError(`"${text}": give one volume name, e.g. "${kind} db"`);
  const volume = parseVolume(words[1]!, text);
  if (kind === 'create') {
    const large = words[2] === 'large';
    const parameters = parseParameters(words.slice(large ? 3 : 2), text);
    return { kind, volume, large, ...(parameters === undefined ? {} : { parameters }), ...timing };
  }
  if (kind === 'restore' && words.length === 3 && words[2] === 'crowded')
    return { kind, volume, crowded: true, ...timing };
  if (words.length !== 2)
    throw new RecipeError(
      `"${text}": give one volume name, e.g. "${kind} db"${kind === 'restore' ? ', and "crowded" to run it under a crowded mount table' : ''}`,
    );
  if (kind === 'kill-create')
    return {
      kind,
      volume,
      ...(killAtMs === undefined ? {} : { killAtMs }),
      ...(killAt === undefined ? {} : { killAt }),
      ...timing,
    };
  return { kind, volume, ...timing };
}

function parseVolume(word: string, text: string): VolumeKey {
  const [namespace, name] = word.includes('/') ? word.split('/', 2) : [DEFAULT_NAMESPACE, word];
  if (!namespace || !name) throw new RecipeError(`"${text}": a volume is NAME or NAMESPACE/NAME`);
  return { namespace, name };
}

/** Removes a trailing `at write` (or another of KILL_EVENTS) from `words` and returns the event. */
function takeKillEvent(words: string[]): KillEvent | undefined {
  const event = KILL_EVENTS.find((e) => e === words.at(-1));
  if (event === undefined || words.length < 4 || words.at(-2) !== 'at') return undefined;
  words.splice(-2, 2);
  return event;
}

/** Removes a trailing `<word> <N>ms` from `words` and returns N. */
function takeMs(words: string[], word: string, text: string): number | undefined {
  const at = words.lastIndexOf(word);
  if (at < 2) return undefined;
  const ms = /^(\d+)ms$/.exec(words[at + 1] ?? '');
  if (at !== words.length - 2 || ms === null)
    throw new RecipeError(
      `"${text}": "${word}" takes a time in milliseconds at the end, e.g. "${word} 40ms"${word === 'at' ? `, or the plugin's first ${KILL_EVENTS.join(', ')}` : ''}`,
    );
  words.splice(at, 2);
  return Number(ms[1]);
}

function parseParameters(words: string[], text: string): Record<string, string> | undefined {
  if (words.length === 0) return undefined;
  const entries = words.map((word) => {
    const eq = word.indexOf('=');
    if (eq < 1)
      throw new RecipeError(`"${text}": after the volume a create takes "large" and parameters, e.g. "mode=0700"`);
    return [decodeURIComponent(word.slice(0, eq)), decodeURIComponent(word.slice(eq + 1))] as const;
  });
  return Object.fromEntries(entries);
}
