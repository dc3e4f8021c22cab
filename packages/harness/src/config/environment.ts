import { UsageError } from '../errors/dhv-error.js';

/**
 * The longest delay Node's timers keep: a longer one is cut to 1 ms with only a warning
 * (TimeoutOverflowWarning), and `AbortSignal.timeout` throws past 2^32 − 1.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

interface WholeNumber {
  /** What the number counts, for the error: `milliseconds`, `seconds`. */
  unit: string;
  min: number;
  max: number;
}

/**
 * A whole number read from environment variable `name`, or `fallback` when it is unset or
 * empty. Anything else — a fraction, a sign, words, a value out of range — is refused with
 * an error naming the variable, never read as the default or handed to a timer that would
 * misread it.
 */
export function wholeNumberFromEnv(
  name: string,
  fallback: number,
  { unit, min, max }: WholeNumber,
  env: NodeJS.ProcessEnv = process.env,
): number {
  const text = env[name];
  if (text === undefined || text === '') return fallback;
  const value = /^[0-9]{1,16}$/.test(text) ? Number(text) : NaN;
  if (value >= min && value <= max) return value;
  throw new UsageError(
    `${name}=${JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text)} is not a whole number of ${unit} from ${min} to ${max}\n` +
      `Set ${name} to one (the default is ${fallback}), or unset it`,
    'ENV_INVALID',
    { variable: name },
  );
}
