import type { Operation } from '@dhv/sdk';
import {
  RESPONSE_FIELDS,
  goInt64,
  goKeyMatches,
  parseGoJson,
  type GoJsonValue,
  type GoKind,
  type ResponseField,
} from '@dhv/sdk/client';

/**
 * Reads a plugin's stdout field by field, so that each check can judge one field
 * without another field's defect hiding it. The SDK's decoders decide what the agent
 * accepts; this only says which part is wrong. The fields are the SDK's response table's.
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

/** The fingerprint's one field, as the SDK's response table names it. */
export const VERSION_FIELD = 'version' satisfies keyof (typeof RESPONSE_FIELDS)['fingerprint']['fields'];

export type FieldReading<T> = { ok: true; value: T } | { ok: false; problem: string };

/** What a field reads as: a version as the plugin wrote it. */
interface ReadKinds {
  string: string;
  int64: bigint;
  version: string;
}
/** A missing optional field reads as Go's zero value. */
const ZERO: ReadKinds = { string: '', int64: 0n, version: '' };

type FieldsOf<Op extends Operation> = (typeof RESPONSE_FIELDS)[Op]['fields'];
type KeyOf<Op extends Operation> = keyof FieldsOf<Op> & string;
type ReadingOf<Op extends Operation, K extends KeyOf<Op>> = FieldReading<
  ReadKinds[FieldsOf<Op>[K] extends ResponseField ? FieldsOf<Op>[K]['kind'] : never]
>;

/** Every field of an operation's response, each read on its own. */
export function readResponse(operation: Operation, stdout: string | Uint8Array): Record<string, FieldReading<unknown>> {
  const doc = parsePluginStdout(stdout);
  const fields = Object.entries(RESPONSE_FIELDS[operation].fields as Record<string, ResponseField>);
  return Object.fromEntries(fields.map(([key, spec]) => [key, readField(doc, key, spec)]));
}

/** One field of an operation's response: its value (Go's zero value when an optional one is missing), or a problem. */
export function readResponseField<Op extends Operation, K extends KeyOf<Op>>(
  operation: Op,
  key: K,
  stdout: string | Uint8Array,
): ReadingOf<Op, K> {
  const spec = (RESPONSE_FIELDS[operation].fields as Record<string, ResponseField>)[key]!;
  return readField(parsePluginStdout(stdout), key, spec) as ReadingOf<Op, K>;
}

function readField(doc: JsonDocument, key: string, spec: ResponseField): FieldReading<unknown> {
  if (!doc.ok) return { ok: false, problem: `stdout is not one JSON document (${doc.error})` };
  if (doc.value.kind !== 'object' && spec.required)
    return { ok: false, problem: `stdout is a JSON ${doc.value.kind}, not an object` };
  const value = field(doc.value, key);
  if (value === undefined || value.kind === 'null')
    return spec.required
      ? { ok: false, problem: `the response has no "${key}"` }
      : { ok: true, value: ZERO[spec.kind] };
  return READERS[spec.kind](value, key, spec.required);
}

const readString = (value: GoJsonValue, key: string, required: boolean): FieldReading<string> => {
  if (value.kind !== 'string') return { ok: false, problem: `"${key}" is a JSON ${value.kind}, not a string` };
  if (required && value.value === '') return { ok: false, problem: `"${key}" is empty` };
  return { ok: true, value: value.value };
};

const READERS: { [K in GoKind]: (value: GoJsonValue, key: string, required: boolean) => FieldReading<ReadKinds[K]> } = {
  string: readString,
  version: readString,
  int64: (value, key) => {
    if (value.kind !== 'number') {
      const shown = value.kind === 'string' ? `the string ${JSON.stringify(value.value)}` : `a JSON ${value.kind}`;
      return {
        ok: false,
        problem: `"${key}" is ${shown}; it must be a JSON integer (the agent refuses anything else)`,
      };
    }
    const n = goInt64(value.raw);
    if (n === undefined)
      return { ok: false, problem: `"${key}" is ${value.raw}; it must be a whole number that fits an int64` };
    return { ok: true, value: n };
  },
};

/** The `path` of a create response: a string, or a problem. */
export function readCreatedPath(stdout: string | Uint8Array): FieldReading<string> {
  return readResponseField('create', 'path', stdout);
}

/** The `bytes` of a create response as Go reads it into an int64 (missing means 0). */
export function readCreatedBytes(stdout: string | Uint8Array): FieldReading<bigint> {
  return readResponseField('create', 'bytes', stdout);
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
