/**
 * The few pieces of Go's `strconv` whose results and error texts Nomad's built-in mkdir
 * hands to users: ParseUint, Atoi, and Quote (which every strconv error uses to show its input).
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

const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

/** Go's `strconv.Quote`: printable characters as they are, the rest as Go escapes. */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (cp < 0x80 && cp >= 0x20 && cp !== 0x7f) out += ch;
    else if (ch === '\x07') out += '\\a';
    else if (ch === '\b') out += '\\b';
    else if (ch === '\f') out += '\\f';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\v') out += '\\v';
    else if (cp < 0x80) out += `\\x${cp.toString(16).padStart(2, '0')}`;
    else if (cp >= 0xd800 && cp <= 0xdfff)
      out += '\ufffd'; // a lone surrogate reached Go as U+FFFD, which is printable
    else if (PRINTABLE.test(ch)) out += ch;
    else if (cp < 0x10000) out += `\\u${cp.toString(16).padStart(4, '0')}`;
    else out += `\\U${cp.toString(16).padStart(8, '0')}`;
  }
  return `${out}"`;
}
