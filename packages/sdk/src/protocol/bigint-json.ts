import { parseGoJson, type GoJsonValue } from '../go/json.js';

/**
 * JSON with bigints, the one codec of the project: Nomad's capacities are int64 and may
 * pass 2^53, so integers are written from bigints and read back into bigints exactly.
 */

/** JSON.stringify that writes a bigint as a plain integer. */
export function encodeJson(value: unknown, options: { indent?: number } = {}): string {
  // A fresh marker each time, so no string in `value` can be taken for a bigint.
  const marker = `\u0000bigint-${Math.random().toString(36).slice(2)}:`;
  const json = JSON.stringify(
    value,
    (_key, v: unknown) => (typeof v === 'bigint' ? `${marker}${v}` : v),
    options.indent,
  );
  const escapedMarker = JSON.stringify(marker)
    .slice(1, -1)
    .replace(/[\\^$.*+?()[\]{}|]/g, '\\$&');
  return json.replace(new RegExp(`"${escapedMarker}(-?[0-9]+)"`, 'g'), '$1');
}

/**
 * Parses JSON into plain values where every integer literal becomes a bigint. Throws on
 * bad syntax. JSON.parse is the fast path; a document holding an integer beyond 2^53
 * (which JSON.parse would round) is parsed again exactly.
 */
export function decodeJson(text: string): unknown {
  let lossy = false;
  const fast: unknown = JSON.parse(text, (_key, value: unknown) => {
    if (typeof value !== 'number' || !Number.isInteger(value)) return value;
    if (!Number.isSafeInteger(value)) lossy = true;
    return BigInt(value);
  });
  return lossy ? toPlain(parseGoJson(text)) : fast;
}

function toPlain(value: GoJsonValue): unknown {
  switch (value.kind) {
    case 'null':
      return null;
    case 'bool':
    case 'string':
      return value.value;
    case 'number':
      return /^-?[0-9]+$/.test(value.raw) ? BigInt(value.raw) : Number(value.raw);
    case 'array':
      return value.items.map(toPlain);
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [k, v] of value.entries) out[k] = toPlain(v);
      return out;
    }
  }
}
