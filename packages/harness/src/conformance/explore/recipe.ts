/**
 * The steps of an exploration, in the words of a replay recipe: one step per agent
 * action, separated by `;`, calls run at once joined by `+`. A volume is written as its
 * name, prefixed with its namespace when that is not `default` (`prod/db`).
 *
 *   create db; create db-backup large; delete db; restart; fill 10; fingerprint
 */

/**
 * A call on one volume. `large`: a create with more than the default capacity. Generated
 * steps may aim at "the n-th volume the agent knows" (a Pick) instead of a name, so that
 * deletes and restores mostly hit live volumes; a step is resolved to names before it runs.
 */
export type VolumeCall<V = VolumeKey> =
  | { kind: 'create'; volume: V; large: boolean }
  | { kind: 'restore'; volume: V }
  | { kind: 'delete'; volume: V }
  | { kind: 'cleanup-delete'; volume: V }
  | { kind: 'kill-create'; volume: V };

export type Step<V = VolumeKey> =
  | VolumeCall<V>
  /** Several calls on different volumes, started at once. */
  | { kind: 'together'; calls: VolumeCall<V>[] }
  /** An agent restart: every live volume restored at once. */
  | { kind: 'restart' }
  /** `count` new volumes, one after another, as a busy node has. */
  | { kind: 'fill'; count: number }
  | { kind: 'fingerprint' };

/** The `index`-th (modulo their number) of the volumes a call can aim at. */
export interface Pick {
  pick: number;
}

export interface VolumeKey {
  namespace: string;
  name: string;
}

const DEFAULT_NAMESPACE = 'default';
const CALL_KINDS = ['create', 'restore', 'delete', 'cleanup-delete', 'kill-create'] as const;

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
      return `create ${formatVolume(step.volume)}${step.large ? ' large' : ''}`;
    default:
      return `${step.kind} ${formatVolume(step.volume)}`;
  }
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
  return parseCall(text);
}

function parseCall(text: string): VolumeCall {
  const words = text.split(/\s+/);
  const kind = CALL_KINDS.find((k) => k === words[0]);
  if (kind === undefined)
    throw new RecipeError(
      `"${text}": unknown step; steps are ${[...CALL_KINDS, 'restart', 'fill N', 'fingerprint'].join(', ')}`,
    );
  const large = kind === 'create' && words[2] === 'large';
  if (words.length !== (large ? 3 : 2)) throw new RecipeError(`"${text}": give one volume name, e.g. "${kind} db"`);
  const [namespace, name] = words[1]!.includes('/') ? words[1]!.split('/', 2) : [DEFAULT_NAMESPACE, words[1]!];
  if (!namespace || !name) throw new RecipeError(`"${text}": a volume is NAME or NAMESPACE/NAME`);
  const volume = { namespace, name };
  return kind === 'create' ? { kind, volume, large } : { kind, volume };
}
