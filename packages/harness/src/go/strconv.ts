import { goQuote } from '@dhv/sdk/client';

/**
 * The few pieces of Go's `strconv` whose results and error texts Nomad's built-in mkdir
 * hands to users: ParseUint and Atoi (Quote, which every strconv error uses to show its input,
 * is the SDK's: both sides need it).
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
