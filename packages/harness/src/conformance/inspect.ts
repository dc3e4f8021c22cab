import {
  createResponseSchema,
  fingerprintResponseSchema,
  goInt64,
  goKeyMatches,
  parseGoJson,
  type GoJsonValue,
} from '@dhv/sdk/client';

/**
 * Reads a plugin's stdout field by field, so that each check can judge one field
 * without another field's defect hiding it. The SDK's decoders decide what the agent
 * accepts; this only says which part is wrong.
 */
export type JsonDocument = { ok: true; value: GoJsonValue } | { ok: false; error: string };

export function parsePluginStdout(stdout: string | Uint8Array): JsonDocument {
  try {
    return { ok: true, value: parseGoJson(stdout) };
  } catch (err) {
    return { ok: false, error: err instanceof Error ? err.message : String(err) };
  }
}

/** The value of the field a Go struct would fill from this object (last matching key wins, as in encoding/json). */
export function field(document: GoJsonValue, name: string): GoJsonValue | undefined {
  if (document.kind !== 'object') return undefined;
  let found: GoJsonValue | undefined;
  for (const [key, value] of document.entries) if (goKeyMatches(key, name)) found = value;
  return found;
}

const [PATH_FIELD, BYTES_FIELD] = Object.keys(createResponseSchema.shape) as ['path', 'bytes'];
/** The fingerprint's one field, as the SDK's schema names it. */
export const VERSION_FIELD = Object.keys(fingerprintResponseSchema.shape)[0] as 'version';

export type FieldReading<T> = { ok: true; value: T } | { ok: false; problem: string };

/** The `path` of a create response: a string, or a problem. */
export function readCreatedPath(stdout: string | Uint8Array): FieldReading<string> {
  const doc = parsePluginStdout(stdout);
  if (!doc.ok) return { ok: false, problem: `stdout is not one JSON document (${doc.error})` };
  if (doc.value.kind !== 'object') return { ok: false, problem: `stdout is a JSON ${doc.value.kind}, not an object` };
  const value = field(doc.value, PATH_FIELD);
  if (value === undefined || value.kind === 'null')
    return { ok: false, problem: `the response has no "${PATH_FIELD}"` };
  if (value.kind !== 'string') return { ok: false, problem: `"${PATH_FIELD}" is a JSON ${value.kind}, not a string` };
  if (value.value === '') return { ok: false, problem: `"${PATH_FIELD}" is empty` };
  return { ok: true, value: value.value };
}

/** The `bytes` of a create response as Go reads it into an int64 (missing means 0). */
export function readCreatedBytes(stdout: string | Uint8Array): FieldReading<bigint> {
  const doc = parsePluginStdout(stdout);
  if (!doc.ok) return { ok: false, problem: `stdout is not one JSON document (${doc.error})` };
  const value = doc.value.kind === 'object' ? field(doc.value, BYTES_FIELD) : undefined;
  if (value === undefined || value.kind === 'null') return { ok: true, value: 0n };
  if (value.kind !== 'number') {
    const shown = value.kind === 'string' ? `the string ${JSON.stringify(value.value)}` : `a JSON ${value.kind}`;
    return {
      ok: false,
      problem: `"${BYTES_FIELD}" is ${shown}; it must be a JSON integer (the agent refuses anything else)`,
    };
  }
  const n = goInt64(value.raw);
  if (n === undefined)
    return { ok: false, problem: `"${BYTES_FIELD}" is ${value.raw}; it must be a whole number that fits an int64` };
  return { ok: true, value: n };
}

/** Lines of stack traces from the runtimes plugins are written in. */
const STACK_TRACE = [
  /^\s+at .+[:(]\d+/m,
  /Traceback \(most recent call last\)/,
  /^goroutine \d+ \[/m,
  /^panic: /m,
  /\.(js|ts|mjs|cjs):\d+:\d+/,
];

export function looksLikeStackTrace(text: string): boolean {
  return STACK_TRACE.some((pattern) => pattern.test(text));
}
