import { GoJsonSyntaxError, parseGoJson, type GoJsonValue } from '../go/json.js';
import { goInt64, goKeyMatches } from '../go/json-unmarshal.js';
import { parseGoVersion, type GoVersion } from '../go/version.js';
import { isOperation, type Operation } from './operations.js';
import { ERROR_FIELD, GO_PACKAGE, RESPONSE_FIELDS, type GoKind, type ResponseStruct } from './response-fields.js';
import type { DecodedResponse } from './response.js';

/**
 * A plugin's stdout decoded the way the agent decodes it (encoding/json into Nomad's
 * structs): keys matched case-insensitively, unknown keys ignored, the last duplicate
 * wins, only white space after the value, and every error in Go's words.
 */

export type Decoded<T> = { ok: true; value: T } | { ok: false; error: string };

type FieldKind = GoKind;
type FieldValue = { string: string; int64: bigint; version: GoVersion | null };

/** A Go struct as encoding/json names it in errors. */
interface GoStruct<S extends Record<string, FieldKind>> {
  /** `HostVolumePluginCreateResponse`, in "Go struct field <name>.<field>". */
  name: string;
  /** `hostvolumemanager.HostVolumePluginCreateResponse`, in "Go value of type <type>". */
  type: string;
  fields: S;
}

const GO_TYPE: Record<FieldKind, string> = { string: 'string', int64: 'int64', version: '*version.Version' };

/** What UnmarshalTypeError says it found: `number 5.5` only where Go tried to parse the number. */
function found(value: GoJsonValue, kind: FieldKind | 'struct'): string {
  switch (value.kind) {
    case 'number':
      return kind === 'int64' ? `number ${value.raw}` : 'number';
    case 'bool':
      return 'bool';
    default:
      return value.kind;
  }
}

function decodeStruct<S extends Record<string, FieldKind>>(
  input: string | Uint8Array,
  struct: GoStruct<S>,
): Decoded<{ [K in keyof S]?: FieldValue[S[K]] }> {
  let root: GoJsonValue;
  try {
    root = parseGoJson(input);
  } catch (err) {
    if (err instanceof GoJsonSyntaxError) return { ok: false, error: err.message };
    throw err;
  }
  const out: Record<string, unknown> = {};
  if (root.kind === 'null') return { ok: true, value: out as never };
  if (root.kind !== 'object')
    return { ok: false, error: `json: cannot unmarshal ${found(root, 'struct')} into Go value of type ${struct.type}` };
  const names = Object.keys(struct.fields);
  // Go keeps the first type mismatch and decodes on; an unmarshaler's own error stops it at once.
  let firstMismatch: string | undefined;
  for (const [key, value] of root.entries) {
    const name = names.find((f) => key === f) ?? names.find((f) => goKeyMatches(key, f));
    if (name === undefined) continue;
    const kind = struct.fields[name]!;
    const decoded = decodeField(kind, value);
    if ('mismatch' in decoded) {
      firstMismatch ??= `json: cannot unmarshal ${found(value, kind)} into Go struct field ${struct.name}.${name} of type ${GO_TYPE[kind]}`;
    } else if ('abort' in decoded) {
      return { ok: false, error: decoded.abort };
    } else if (decoded.set) {
      out[name] = decoded.value;
    }
  }
  if (firstMismatch !== undefined) return { ok: false, error: firstMismatch };
  return { ok: true, value: out as never };
}

function decodeField(
  kind: FieldKind,
  value: GoJsonValue,
): { set: boolean; value?: unknown } | { mismatch: true } | { abort: string } {
  if (value.kind === 'null') return kind === 'version' ? { set: true, value: null } : { set: false };
  switch (kind) {
    case 'string':
      return value.kind === 'string' ? { set: true, value: value.value } : { mismatch: true };
    case 'int64': {
      if (value.kind !== 'number') return { mismatch: true };
      const n = goInt64(value.raw);
      return n === undefined ? { mismatch: true } : { set: true, value: n };
    }
    case 'version': {
      if (value.kind !== 'string') return { mismatch: true };
      const parsed = parseGoVersion(value.value);
      return parsed.ok ? { set: true, value: parsed.version } : { abort: parsed.error };
    }
  }
}

/** Nomad's struct for an operation's response, from the table: its fields, and `error` where it has one. */
function goStruct(table: ResponseStruct): GoStruct<Record<string, FieldKind>> {
  const fields: Record<string, FieldKind> = {};
  for (const [key, field] of Object.entries(table.fields)) fields[key] = field.kind;
  if (table.hasError) fields[ERROR_FIELD.key] = ERROR_FIELD.kind;
  return { name: table.goStruct, type: `${GO_PACKAGE}.${table.goStruct}`, fields };
}

/** Go's zero value of each kind: what a missing or null field leaves in the struct. */
const ZERO: FieldValue = { string: '', int64: 0n, version: null };

/**
 * An operation's stdout as the agent decodes it into its struct: every field of the
 * table, a missing one as Go's zero value (an empty path, 0 bytes, a nil version: the
 * caller refuses what a real agent would crash on or publish unusable).
 */
export function decodeResponse<Op extends Operation>(
  operation: Op,
  stdout: string | Uint8Array,
): Decoded<DecodedResponse[Op]> {
  const table: ResponseStruct = RESPONSE_FIELDS[operation];
  const result = decodeStruct(stdout, goStruct(table));
  if (!result.ok) return result;
  const value: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(table.fields)) value[key] = result.value[key] ?? ZERO[field.kind];
  return { ok: true, value: value as DecodedResponse[Op] };
}

export type DecodedFingerprint = DecodedResponse['fingerprint'];
export type DecodedCreate = DecodedResponse['create'];

/** Fingerprint stdout, as Go decodes it; a nil version is the caller's to refuse. */
export function decodeFingerprintOutput(stdout: string | Uint8Array): Decoded<DecodedFingerprint> {
  return decodeResponse('fingerprint', stdout);
}

/** Create stdout, as Go decodes it; an empty path (the agent accepts it, nobody can mount it) is the caller's to refuse. */
export function decodeCreateOutput(stdout: string | Uint8Array): Decoded<DecodedCreate> {
  return decodeResponse('create', stdout);
}

/** Where a failed plugin's message is read from when its operation's struct has no `error` (delete's holds only that). */
const ERROR_STRUCT = goStruct(RESPONSE_FIELDS.delete);

/**
 * The `error` a failed plugin wrote to stdout: the message (`''` when the document decoded
 * but held none: the agent still appends ": "), or undefined when stdout did not decode
 * into the operation's struct (the agent then appends nothing). The agent decodes a failed
 * create into the whole create response, so `{"error": "x", "bytes": "5"}` gives no
 * message. A fingerprint's stdout is not read on failure; it is read here as delete's.
 */
export function decodeErrorOutput(stdout: string | Uint8Array, operation?: string): string | undefined {
  const table: ResponseStruct | undefined = isOperation(operation) ? RESPONSE_FIELDS[operation] : undefined;
  const result = decodeStruct(stdout, table?.hasError ? goStruct(table) : ERROR_STRUCT);
  return result.ok ? ((result.value[ERROR_FIELD.key] as string | undefined) ?? '') : undefined;
}
