import { goQuote } from './strconv.js';

/**
 * The parsers of Go's `strconv` whose results and error texts reach users: the built-in
 * mkdir's ParseUint and Atoi (which the SDK's `mode`/`uid`/`gid` helpers share), the spec
 * reader's ParseBool and ParseUint, HCL 1's ParseInt and ParseFloat. One home, here, for
 * them and for their `strconv.X: parsing "...": invalid syntax` / `value out of range` texts.
 */

export type GoParsed<T> = { ok: true; value: T } | { ok: false; error: string };

const MAX_UINT64 = (1n << 64n) - 1n;

/** Go's `strconv.ParseUint(s, base, bits)` for an explicit base (2..36): no sign, no prefix, no `_`. */
export function goParseUint(s: string, base: number, bits: number, fn = 'ParseUint'): GoParsed<bigint> {
  const max = bits >= 64 ? MAX_UINT64 : (1n << BigInt(bits)) - 1n;
  if (s === '') return syntaxError(fn, s);
  const b = BigInt(base);
  const cutoff = MAX_UINT64 / b + 1n;
  let n = 0n;
  // Digit by digit, as Go does: an overflow is reported where it happens, even before a bad digit.
  for (const c of s) {
    const d = digitValue(c);
    if (d === undefined || d >= base) return syntaxError(fn, s);
    if (n >= cutoff) return rangeError(fn, s);
    n *= b;
    const n1 = n + BigInt(d);
    if (n1 > max) return rangeError(fn, s);
    n = n1;
  }
  return { ok: true, value: n };
}

/** Go's `strconv.Atoi` on a 64-bit platform: an optional sign, decimal digits, within int64. */
export function goAtoi(s: string): GoParsed<bigint> {
  const fn = 'Atoi';
  if (s === '') return syntaxError(fn, s);
  let rest = s;
  let negative = false;
  if (rest[0] === '+' || rest[0] === '-') {
    negative = rest[0] === '-';
    rest = rest.slice(1);
  }
  const parsed = goParseUint(rest, 10, 64, fn);
  if (!parsed.ok) {
    // ParseInt reports the whole input, sign included, whatever ParseUint saw.
    return parsed.error.endsWith('invalid syntax') ? syntaxError(fn, s) : rangeError(fn, s);
  }
  const limit = 1n << 63n;
  if (!negative && parsed.value >= limit) return rangeError(fn, s);
  if (negative && parsed.value > limit) return rangeError(fn, s);
  return { ok: true, value: negative ? -parsed.value : parsed.value };
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** Go's `strconv.ParseInt(s, 0, 64)`: a sign, then 0x / 0o / 0b / leading-0 octal or decimal, `_` between digits with a prefix. */
export function goParseInt(s: string): GoParsed<bigint> {
  const fn = 'ParseInt';
  const m = /^([+-]?)(0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|0[0-7_]*|[1-9][0-9_]*)$/.exec(s);
  if (!m) return syntaxError(fn, s);
  const body = m[2]!;
  if (body.includes('_') && (!/^0/.test(body) || /__|_$/.test(body) || /^[1-9]/.test(body))) return syntaxError(fn, s);
  let digits = body.replaceAll('_', '');
  if (/^0[0-7]+$/.test(digits)) digits = `0o${digits.slice(1)}`;
  let value = BigInt(digits);
  if (m[1] === '-') value = -value;
  if (value < INT64_MIN || value > INT64_MAX) return rangeError(fn, s);
  return { ok: true, value };
}

/** Go's `strconv.ParseFloat(s, 64)` for decimal literals (HCL's numbers): no hex, `inf`, `NaN` or `_`. */
export function goParseFloat(s: string): GoParsed<number> {
  const fn = 'ParseFloat';
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s)) return syntaxError(fn, s);
  const value = Number(s);
  return Number.isFinite(value) ? { ok: true, value } : rangeError(fn, s);
}

/** Go's `strconv.ParseBool`: `1 t T TRUE true True`, `0 f F FALSE false False`, nothing else. */
export function goParseBool(s: string): GoParsed<boolean> {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(s)) return { ok: true, value: true };
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(s)) return { ok: true, value: false };
  return syntaxError('ParseBool', s);
}

function digitValue(c: string): number | undefined {
  const code = c.charCodeAt(0);
  if (c.length !== 1) return undefined;
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  const lower = code | 0x20;
  if (lower >= 0x61 && lower <= 0x7a) return lower - 0x61 + 10;
  return undefined;
}

function syntaxError(fn: string, s: string): { ok: false; error: string } {
  return { ok: false, error: `strconv.${fn}: parsing ${goQuote(s)}: invalid syntax` };
}

function rangeError(fn: string, s: string): { ok: false; error: string } {
  return { ok: false, error: `strconv.${fn}: parsing ${goQuote(s)}: value out of range` };
}
