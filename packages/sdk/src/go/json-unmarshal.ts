/** How encoding/json.Unmarshal fits a parsed value into a struct: which key is a field, which number an int64. */

/**
 * Whether an object key matches a struct field's JSON name the way encoding/json
 * matches them: an exact match, or equal under Unicode simple case folding
 * (which also folds U+017F LONG S to "s" and U+212A KELVIN SIGN to "k").
 */
export function goKeyMatches(key: string, fieldName: string): boolean {
  if (key === fieldName) return true;
  const fold = (s: string) =>
    Array.from(s, (c) =>
      c === '\u017f' ? 's' : c === '\u212a' ? 'k' : c.length === 1 && c < '\u0080' ? c.toLowerCase() : c,
    ).join('');
  return fold(key) === fold(fieldName);
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** strconv.ParseInt(raw, 10, 64) on a JSON number literal; undefined when Go would refuse it. */
export function goInt64(raw: string): bigint | undefined {
  if (!/^-?(0|[1-9][0-9]*)$/.test(raw)) return undefined;
  const n = BigInt(raw);
  return n < INT64_MIN || n > INT64_MAX ? undefined : n;
}
