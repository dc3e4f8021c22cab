import { goJsonToPlain, parseGoJson } from '../go/json.js';

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
  return lossy ? goJsonToPlain(parseGoJson(text), { integers: 'bigint' }) : fast;
}
