import { parseSize } from '@dhv/sdk';
import { DhvError } from '../errors/dhv-error.js';
import { EXIT_CODES } from '../errors/exit-codes.js';
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
}

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
  return { repeat, parameters, capacityMin, capacityMax, expansionSize };
}

/** `k=v` pairs from the command line; the first `=` splits, so values may contain `=`. */
export function parseParameterPairs(pairs: readonly string[]): Record<string, string> | null {
  if (pairs.length === 0) return null;
  const out: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new InvalidSettingsError(`--param ${JSON.stringify(pair)}: expected key=value`, 'param');
    out[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return out;
}
