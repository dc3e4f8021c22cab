/**
 * Go's `strconv.Quote`, which Nomad's `%q` and every strconv error use to show a string.
 * The one definition in dhv (test/go-homes.test.ts keeps it so).
 */

/** Go's `unicode.IsPrint`: letters, marks, numbers, punctuation, symbols and the ASCII space. */
const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u;

const SHORT_ESCAPES: Readonly<Record<number, string>> = {
  0x07: '\\a',
  0x08: '\\b',
  0x0c: '\\f',
  0x0a: '\\n',
  0x0d: '\\r',
  0x09: '\\t',
  0x0b: '\\v',
};

/**
 * Go's `strconv.Quote`: double quotes; printable runes as they are; `\a \b \f \n \r \t \v`;
 * other control bytes as `\xNN`; other runes as `\uNNNN` or `\UNNNNNNNN`; each byte of
 * invalid UTF-8 as `\xNN`. A string is quoted as the UTF-8 Node would hand Go (a lone
 * surrogate becomes U+FFFD); bytes are quoted as they are.
 */
export function goQuote(s: string | Uint8Array): string {
  const bytes = typeof s === 'string' ? new TextEncoder().encode(s) : s;
  let out = '"';
  for (let i = 0; i < bytes.length;) {
    const [rune, width] = decodeRune(bytes, i);
    out += rune === undefined ? `\\x${hex(bytes[i]!, 2)}` : escapedRune(rune);
    i += width;
  }
  return `${out}"`;
}

function escapedRune(r: number): string {
  if (r === 0x22 || r === 0x5c) return `\\${String.fromCodePoint(r)}`;
  if (r < 0x80) {
    if (r >= 0x20 && r < 0x7f) return String.fromCodePoint(r);
    return SHORT_ESCAPES[r] ?? `\\x${hex(r, 2)}`;
  }
  const ch = String.fromCodePoint(r);
  if (PRINTABLE.test(ch)) return ch;
  return r < 0x10000 ? `\\u${hex(r, 4)}` : `\\U${hex(r, 8)}`;
}

function hex(n: number, width: number): string {
  return n.toString(16).padStart(width, '0');
}

/** Go's `utf8.DecodeRune` at `i`: the rune and its width, or no rune (width 1) where the UTF-8 is invalid. */
function decodeRune(b: Uint8Array, i: number): [number | undefined, number] {
  const b0 = b[i]!;
  if (b0 < 0x80) return [b0, 1];
  const cont = (k: number, lo = 0x80, hi = 0xbf) => i + k < b.length && b[i + k]! >= lo && b[i + k]! <= hi;
  if (b0 >= 0xc2 && b0 <= 0xdf) return cont(1) ? [((b0 & 0x1f) << 6) | (b[i + 1]! & 0x3f), 2] : [undefined, 1];
  if (b0 >= 0xe0 && b0 <= 0xef) {
    const [lo, hi] = b0 === 0xe0 ? [0xa0, 0xbf] : b0 === 0xed ? [0x80, 0x9f] : [0x80, 0xbf];
    if (!cont(1, lo, hi) || !cont(2)) return [undefined, 1];
    return [((b0 & 0x0f) << 12) | ((b[i + 1]! & 0x3f) << 6) | (b[i + 2]! & 0x3f), 3];
  }
  if (b0 >= 0xf0 && b0 <= 0xf4) {
    const [lo, hi] = b0 === 0xf0 ? [0x90, 0xbf] : b0 === 0xf4 ? [0x80, 0x8f] : [0x80, 0xbf];
    if (!cont(1, lo, hi) || !cont(2) || !cont(3)) return [undefined, 1];
    const r = ((b0 & 0x07) << 18) | ((b[i + 1]! & 0x3f) << 12) | ((b[i + 2]! & 0x3f) << 6) | (b[i + 3]! & 0x3f);
    return [r, 4];
  }
  return [undefined, 1];
}
