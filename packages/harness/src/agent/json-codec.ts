import { encodeResponse } from '@dhv/sdk';
import { parseGoJson, type GoJsonValue } from '@dhv/sdk/client';

/**
 * JSON for files the agent keeps: capacities are int64 in Nomad and may exceed 2^53,
 * so integers are written and read back exactly (as bigint) rather than through Number.
 */
export function encodeJson(value: unknown): string {
  return encodeResponse(value);
}

/**
 * Parses JSON into plain values where every integer literal becomes a bigint. Throws on
 * bad syntax. JSON.parse is the fast path; a document holding an integer beyond 2^53
 * (which JSON.parse would round) is parsed again exactly.
 */
export function decodeJson(text: string): unknown {
  let lossy = false;
  const fast = JSON.parse(text, (_key, value: unknown) => {
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
