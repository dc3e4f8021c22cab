import { parseSize } from '@dhv/sdk';
import { DhvError } from '../errors/dhv-error.js';
import { EXIT_CODES } from '../errors/exit-codes.js';
import { MAX_TIMER_MS } from '../config/environment.js';
import { parseRecipe, RecipeError } from './explore/recipe.js';
import type { SuiteSettings } from './types.js';

export const DEFAULT_REPEAT = 5;

/** What a caller may give; sizes as numbers, bigints or human strings ("50MB", "1GiB"). */
export interface SettingsInput {
  repeat?: number;
  parameters?: Record<string, string> | null;
  capacityMin?: bigint | number | string;
  capacityMax?: bigint | number | string;
  /** capacity_min of the larger create that create.larger-capacity asks for. */
  expansionSize?: bigint | number | string;
  /** Whether the explore area runs (default true; `dhv check --no-explore`). */
  explore?: boolean;
  /** How long the explorer generates random sequences, in milliseconds (default 30 s). */
  exploreBudgetMs?: number;
  /** The explorer's seed (default: a random one, printed in the report). */
  seed?: number;
  /** At most this many random sequences (default: as many as the budget allows). */
  runs?: number;
  /** Replay one recipe instead of exploring, like `create db; delete db`. */
  replay?: string;
}

export const DEFAULT_EXPLORE_BUDGET_MS = 30_000;
/** The longest budget, in whole seconds, whose shrinking (4 budgets) still fits one of Node's timers. */
export const MAX_EXPLORE_BUDGET_MS = Math.floor(MAX_TIMER_MS / 4 / 1000) * 1000;

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
  const expansionSize = size(input.expansionSize, 'expansion-size');
  if (expansionSize > 0n && expansionSize <= capacityMin) {
    throw new InvalidSettingsError(
      `expansion-size (${expansionSize}) must be larger than capacity-min (${capacityMin})`,
      'expansion-size',
    );
  }
  const parameters = input.parameters && Object.keys(input.parameters).length > 0 ? { ...input.parameters } : null;
  return { repeat, parameters, capacityMin, capacityMax, expansionSize, explore: exploreSettings(input) };
}

function exploreSettings(input: SettingsInput): SuiteSettings['explore'] {
  const budgetMs = input.exploreBudgetMs ?? DEFAULT_EXPLORE_BUDGET_MS;
  if (!Number.isFinite(budgetMs) || budgetMs <= 0)
    throw new InvalidSettingsError(`explore-budget must be a positive time, got ${budgetMs} ms`, 'explore-budget');
  // Shrinking a failure may take 4 budgets, all on one timer.
  if (budgetMs > MAX_EXPLORE_BUDGET_MS)
    throw new InvalidSettingsError(
      `explore-budget must be at most ${MAX_EXPLORE_BUDGET_MS / 1000} s, got ${budgetMs / 1000} s`,
      'explore-budget',
    );
  for (const [name, value] of [
    ['seed', input.seed],
    ['runs', input.runs],
  ] as const) {
    if (value !== undefined && (!Number.isSafeInteger(value) || value < (name === 'runs' ? 1 : 0)))
      throw new InvalidSettingsError(
        `${name} must be a whole number${name === 'runs' ? ' of at least 1' : ''}, got ${value}`,
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
    budgetMs,
    seed: input.seed ?? Math.floor(Math.random() * 2 ** 31),
    runs: input.runs,
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
