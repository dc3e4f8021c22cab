/**
 * Nomad's CLI decodes a spec into its API struct with mapstructure's weak typing, so a
 * value written without quotes still becomes a string: numbers as Go formats them
 * (`1000`, `1.5`), booleans as `1` and `0`.
 */
export type WeakString = { ok: true; value: string } | { ok: false; error: string };

export function goString(value: unknown): WeakString {
  switch (typeof value) {
    case 'string':
      return { ok: true, value };
    case 'boolean':
      return { ok: true, value: value ? '1' : '0' };
    case 'number':
      return { ok: true, value: goFormatNumber(value) };
    case 'bigint':
      return { ok: true, value: value.toString() };
    default:
      return { ok: false, error: `expected type 'string', got unconvertible type '${goTypeName(value)}'` };
  }
}

/** An integer as strconv.FormatInt, anything else as strconv.FormatFloat(f, 'f', -1, 64): never an exponent. */
export function goFormatNumber(n: number): string {
  if (!Number.isFinite(n)) return n > 0 ? '+Inf' : n < 0 ? '-Inf' : 'NaN';
  if (Number.isInteger(n)) return BigInt(n).toString();
  const text = String(n);
  const match = /^(-?)(\d+)(?:\.(\d+))?e([+-]\d+)$/.exec(text);
  if (!match) return text;
  const [, sign, whole, fraction = '', exponent] = match;
  const digits = `${whole}${fraction}`;
  const point = whole!.length + Number(exponent);
  if (point <= 0) return `${sign}0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return `${sign}${digits}${'0'.repeat(point - digits.length)}`;
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}

function goTypeName(value: unknown): string {
  if (Array.isArray(value))
    return value.every((v) => v !== null && typeof v === 'object' && !Array.isArray(v))
      ? '[]map[string]interface {}'
      : '[]interface {}';
  if (value === null || value === undefined) return '<nil>';
  if (typeof value === 'object') return 'map[string]interface {}';
  return typeof value;
}
