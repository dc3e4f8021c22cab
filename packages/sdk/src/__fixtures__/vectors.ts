import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { goJsonToPlain, parseGoJson } from '../go/json.js';

/** The cases of `test/vectors/<name>.json`, computed by the Go code a Nomad agent runs. */
export function loadVectors<T>(name: string): T[] {
  const file = fileURLToPath(new URL(`../../../../test/vectors/${name}.json`, import.meta.url));
  const doc = goJsonToPlain(parseGoJson(readFileSync(file, 'utf8')), { integers: 'bigint' }) as unknown as {
    cases: T[];
  };
  return doc.cases;
}
