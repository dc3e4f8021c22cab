import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseGoJson, type GoJsonValue } from '../go/json.js';

/** A test vector value: JSON with integers as bigint, since some exceed 2^53 and JSON.parse would round them. */
export type Vector = null | boolean | string | bigint | number | Vector[] | { [key: string]: Vector };

function toVector(value: GoJsonValue): Vector {
  switch (value.kind) {
    case 'null':
      return null;
    case 'bool':
    case 'string':
      return value.value;
    case 'number':
      return /^-?[0-9]+$/.test(value.raw) ? BigInt(value.raw) : Number(value.raw);
    case 'array':
      return value.items.map(toVector);
    case 'object':
      return Object.fromEntries(value.entries.map(([k, v]) => [k, toVector(v)]));
  }
}

/** The cases of `test/vectors/<name>.json`, computed by the Go code a Nomad agent runs. */
export function loadVectors<T>(name: string): T[] {
  const file = fileURLToPath(new URL(`../../../../test/vectors/${name}.json`, import.meta.url));
  const doc = toVector(parseGoJson(readFileSync(file, 'utf8'))) as { cases: T[] };
  return doc.cases;
}
