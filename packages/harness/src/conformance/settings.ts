import { parseSize } from '@dhv/sdk';
import { DhvError } from '../errors/dhv-error.js';
import { EXIT_CODES } from '../errors/exit-codes.js';
import { parseRecipe, RecipeError } from './explore/recipe.js';
import { DEFAULT_CAPACITY_BOUND, capacityBound, sizeWords } from './space-budget.js';
import { FEATURES, type Feature, type SuiteSettings } from './types.js';

export const DEFAULT_REPEAT = 5;

/** What a caller may give; sizes as numbers, bigints or human strings ("50MB", "1GiB"). */
export interface SettingsInput {
  repeat?: number;
  parameters?: Record<string, string> | null;
  capacityMin?: bigint | number | string;
  capacityMax?: bigint | number | string;
  /**
   * The smallest volume the plugin makes (`--capacity-floor`; xfs needs 300 MiB): the sizes dhv
   * check chooses itself start there, and a refusal of them fails instead of "cannot judge".
   */
  capacityFloor?: bigint | number | string;
  /** capacity_min of the larger create that create.larger-capacity asks for. */
  expansionSize?: bigint | number | string;
  /** Whether the explore area runs (default true; `dhv check --no-explore`). */
  explore?: boolean;
  /** Removed: the explorer's budget is a number of sequences (`runs`), not a time. Refused when given. */
  exploreBudgetMs?: never;
  /** The explorer's seed (default: a random one, printed in the report). */
  seed?: number;
  /** How many random sequences the explorer runs (default DEFAULT_EXPLORE_RUNS), whatever time they take. */
  runs?: number;
  /**
   * Whether the explorer's systematic phase runs before the random sequences (default true).
   * It is the same for every seed: a search of many seeds runs it once, then the others without.
   */
  systematic?: boolean;
  /** Replay one recipe instead of exploring, like `create db; delete db`. */
  replay?: string;
  /** What the plugin declares it does (`--supports`): a refusal of a declared feature fails, not skips. */
  supports?: readonly string[];
}

/**
 * The random sequences plain `dhv check` runs: a count, so that a seed runs the same calls on
 * any machine at any load. The systematic phase before them drives every defect class of the
 * README's list on purpose (explore/scenarios.ts), so the random ones look only for what no
 * class names: a correct plugin's sequence is about 35 calls, and a whole `dhv check` of a
 * plugin whose calls take milliseconds aims at 15 s at rest (bench/RESULTS.md).
 */
export const DEFAULT_EXPLORE_RUNS = 2;
/** More sequences than anyone waits for; a larger --runs is a typo. */
export const MAX_EXPLORE_RUNS = 100_000;

export class InvalidSettingsError extends DhvError {
  readonly code = 'INVALID_SETTINGS';
  override readonly exitCode = EXIT_CODES.usage;
  constructor(
    message: string,
    readonly setting: string,
  ) {
    super(message, { setting });
  }
}

function size(value: bigint | number | string | undefined, setting: string): bigint {
  if (value === undefined) return 0n;
  try {
    if (typeof value === 'string') return parseSize(value);
    if (typeof value === 'number' && !Number.isSafeInteger(value))
      throw new Error(`${value} is not a whole number of bytes`);
    const n = BigInt(value);
    if (n < 0n) throw new Error(`${value} is negative`);
    return n;
  } catch (err) {
    throw new InvalidSettingsError(`${setting}: ${(err as Error).message}`, setting);
  }
}

export function resolveSettings(input: SettingsInput = {}): SuiteSettings {
  const repeat = input.repeat ?? DEFAULT_REPEAT;
  if (!Number.isInteger(repeat) || repeat < 1)
    throw new InvalidSettingsError(`repeat must be a whole number of at least 1, got ${repeat}`, 'repeat');
  const capacityMin = size(input.capacityMin, 'capacity-min');
  const capacityMax = size(input.capacityMax, 'capacity-max');
  if (capacityMax > 0n && capacityMax < capacityMin) {
    throw new InvalidSettingsError(
      `capacity-max (${capacityMax}) is smaller than capacity-min (${capacityMin})`,
      'capacity-max',
    );
  }
  const capacityFloor = size(input.capacityFloor, 'capacity-floor');
  if (capacityMax > 0n && capacityMax < capacityFloor)
    throw new InvalidSettingsError(
      `capacity-max (${sizeWords(capacityMax)}) is below capacity-floor (${sizeWords(capacityFloor)}): the plugin declares it makes no volume that small`,
      'capacity-max',
    );
  const expansionSize = size(input.expansionSize, 'expansion-size');
  if (expansionSize > 0n && expansionSize <= capacityMin) {
    throw new InvalidSettingsError(
      `expansion-size (${expansionSize}) must be larger than capacity-min (${capacityMin})`,
      'expansion-size',
    );
  }
  // Nothing dhv check asks a plugin for lies past the bound: a size the user gave above it is a mistake to say now.
  const bound = capacityBound({ capacityMax });
  for (const [setting, value] of [
    ['capacity-min', capacityMin],
    ['capacity-floor', capacityFloor],
    ['expansion-size', expansionSize],
  ] as const) {
    if (value > bound)
      throw new InvalidSettingsError(
        capacityMax > 0n
          ? `${setting} (${sizeWords(value)}) is larger than capacity-max (${sizeWords(capacityMax)}): dhv check never asks a plugin for more than capacity-max`
          : `${setting} (${sizeWords(value)}) is larger than dhv check's default bound of ${sizeWords(DEFAULT_CAPACITY_BOUND)}: give --capacity-max to allow more`,
        setting,
      );
  }
  const parameters = input.parameters && Object.keys(input.parameters).length > 0 ? { ...input.parameters } : null;
  return {
    repeat,
    parameters,
    capacityMin,
    capacityMax,
    capacityFloor,
    expansionSize,
    supports: features(input.supports),
    explore: exploreSettings(input),
  };
}

function features(given: readonly string[] | undefined): Feature[] {
  const unknown = (given ?? []).filter((f) => !(FEATURES as readonly string[]).includes(f));
  if (unknown.length > 0)
    throw new InvalidSettingsError(
      `supports: ${unknown.map((f) => JSON.stringify(f)).join(', ')} is not a feature dhv check knows; known: ${FEATURES.join(', ')}`,
      'supports',
    );
  return FEATURES.filter((f) => given?.includes(f));
}

function exploreSettings(input: SettingsInput): SuiteSettings['explore'] {
  // A JavaScript caller (or a cast) may still give the old time budget: saying so beats ignoring it.
  if ((input as { exploreBudgetMs?: unknown }).exploreBudgetMs !== undefined)
    throw new InvalidSettingsError(
      `exploreBudgetMs was removed: the explorer runs a number of random sequences, not a time; give runs (default ${DEFAULT_EXPLORE_RUNS}) instead`,
      'explore-budget',
    );
  for (const [name, value] of [
    ['seed', input.seed],
    ['runs', input.runs],
  ] as const) {
    if (
      value !== undefined &&
      (!Number.isSafeInteger(value) ||
        value < (name === 'runs' ? 1 : 0) ||
        (name === 'runs' && value > MAX_EXPLORE_RUNS))
    )
      throw new InvalidSettingsError(
        `${name} must be a whole number${name === 'runs' ? ` from 1 to ${MAX_EXPLORE_RUNS}` : ''}, got ${value}`,
        name,
      );
  }
  let replay;
  try {
    replay = input.replay === undefined ? undefined : parseRecipe(input.replay);
  } catch (err) {
    if (err instanceof RecipeError) throw new InvalidSettingsError(`replay: ${err.message}`, 'replay');
    throw err;
  }
  return {
    enabled: input.explore ?? true,
    seed: input.seed ?? Math.floor(Math.random() * 2 ** 31),
    runs: input.runs ?? DEFAULT_EXPLORE_RUNS,
    systematic: input.systematic ?? true,
    replay,
  };
}

/**
 * `k=v` pairs from the command line (`dhv check`, `dhv plugin run`); the first `=` splits,
 * so values may contain `=`; a later pair of a key wins. Every key, `__proto__` included,
 * is an own key of the result.
 */
export function parseParameterPairs(pairs: readonly string[] | undefined): Record<string, string> | null {
  if (!pairs || pairs.length === 0) return null;
  const out = new Map<string, string>();
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at <= 0)
      throw new InvalidSettingsError(
        `--param ${JSON.stringify(pair)}: expected key=value, like --param mode=0755`,
        'param',
      );
    out.set(pair.slice(0, at), pair.slice(at + 1));
  }
  return Object.fromEntries(out);
}
