/**
 * Sizes as the Nomad CLI reads and prints them: go-humanize's ParseBytes for volume
 * specs and IBytes for `Capacity = 47 MiB`.
 */

import { goQuote } from './strconv.js';

const UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  k: 1e3,
  kb: 1e3,
  ki: 2 ** 10,
  kib: 2 ** 10,
  m: 1e6,
  mb: 1e6,
  mi: 2 ** 20,
  mib: 2 ** 20,
  g: 1e9,
  gb: 1e9,
  gi: 2 ** 30,
  gib: 2 ** 30,
  t: 1e12,
  tb: 1e12,
  ti: 2 ** 40,
  tib: 2 ** 40,
  p: 1e15,
  pb: 1e15,
  pi: 2 ** 50,
  pib: 2 ** 50,
  e: 1e18,
  eb: 1e18,
  ei: 2 ** 60,
  eib: 2 ** 60,
};

export const INT64_MAX = 2n ** 63n - 1n;

export class SizeError extends Error {
  constructor(
    message: string,
    readonly input: string,
  ) {
    super(message);
    this.name = 'SizeError';
  }
}

/**
 * Parses a human size ("50MB" = 50000000, "100GiB" = 107374182400) exactly as
 * go-humanize does. Nomad then converts to int64, which wraps sizes of 8 EiB and more
 * to negative numbers; this refuses them instead.
 */
export function parseSize(input: string): bigint {
  // The Nomad CLI reads an empty capacity as "not set", which the agent passes on as 0.
  if (input === '') return 0n;
  const { digits, unit } = scanSize(input);
  if (!isGoFloat(digits)) {
    throw new SizeError(
      `invalid size ${JSON.stringify(input)}: expected a number with an optional unit, like "50MB" or "100GiB"`,
      input,
    );
  }
  const multiplier = UNITS[unit];
  if (multiplier === undefined) {
    throw new SizeError(
      `invalid size ${JSON.stringify(input)}: unknown unit ${JSON.stringify(unit)} (use B, kB, KiB, MB, MiB, GB, GiB, TB, TiB, PB, PiB, EB or EiB)`,
      input,
    );
  }
  const value = Number(digits) * multiplier;
  // 2^63 is the first float64 past INT64_MAX: anything read as that or more does not fit.
  if (value >= 2 ** 63) {
    const read = value >= 2 ** 64 ? 'more than 2^64' : BigInt(Math.trunc(value)).toString();
    throw new SizeError(
      `invalid size ${JSON.stringify(input)}: too large: Nomad's size reader (go-humanize, through a float64) makes it ${read} bytes, past the largest int64 (${INT64_MAX}), and wraps it to a negative size`,
      input,
    );
  }
  return BigInt(Math.trunc(value));
}

/**
 * A size given to dhv on a command line for what the agent passes a plugin (an int64 in
 * Nomad, never read through go-humanize there): a whole number of bytes is taken
 * exactly, up to the largest int64; anything else as parseSize reads it.
 */
export function parseByteSize(input: string): bigint {
  if (/^[0-9]+$/.test(input)) {
    const exact = BigInt(input);
    if (exact > INT64_MAX)
      throw new SizeError(`invalid size ${JSON.stringify(input)}: too large: the largest is ${INT64_MAX} bytes`, input);
    return exact;
  }
  return parseSize(input);
}

const BINARY_UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'];

/** Formats bytes with binary units as `nomad volume status` prints them: `0 B`, `47 MiB`, `1.5 KiB`. */
export function formatSize(bytes: bigint | number): string {
  const n = typeof bytes === 'bigint' ? bytes : BigInt(Math.trunc(bytes));
  if (n < 0n) return `-${formatSize(-n)}`;
  if (n < 10n) return `${n} B`;
  const f = Number(n);
  const e = Math.floor(Math.log(f) / Math.log(1024));
  const value = Math.floor((f / 1024 ** e) * 10 + 0.5) / 10;
  return `${value < 10 ? value.toFixed(1) : roundHalfEven(value)} ${BINARY_UNITS[e]}`;
}

function roundHalfEven(value: number): string {
  const floor = Math.floor(value);
  const diff = value - floor;
  if (diff > 0.5 || (diff === 0.5 && floor % 2 === 1)) return String(floor + 1);
  return String(floor);
}

/**
 * Splits a size as go-humanize's ParseBytes does: the leading run of digits, dots and
 * commas (commas dropped) is the number, the rest, trimmed and lower-cased, the unit.
 */
function scanSize(input: string): { digits: string; unit: string } {
  let end = 0;
  let digits = '';
  for (const ch of input) {
    if (!(/\p{Nd}/u.test(ch) || ch === '.' || ch === ',')) break;
    end += ch.length;
    if (ch !== ',') digits += ch;
  }
  return { digits, unit: input.slice(end).trim().toLowerCase() };
}

/** Whether strconv.ParseFloat takes the digits go-humanize scanned. */
function isGoFloat(digits: string): boolean {
  return /^([0-9]+\.?[0-9]*|\.[0-9]+)$/.test(digits);
}

/**
 * go-humanize's ParseBytes, error texts included, as Nomad's CLI reads a spec's
 * capacities: the number is read as a float64 (`1.5` is 1, a 20-digit size is rounded)
 * and the result is a uint64, which Nomad then converts to int64.
 */
export function goParseBytes(input: string): bigint {
  const { digits, unit } = scanSize(input);
  if (!isGoFloat(digits)) throw new SizeError(`strconv.ParseFloat: parsing ${goQuote(digits)}: invalid syntax`, input);
  const multiplier = UNITS[unit];
  if (multiplier === undefined) throw new SizeError(`unhandled size name: ${unit}`, input);
  const value = Number(digits) * multiplier;
  if (value >= 2 ** 64) throw new SizeError(`too large: ${input}`, input);
  return BigInt(Math.trunc(value));
}
