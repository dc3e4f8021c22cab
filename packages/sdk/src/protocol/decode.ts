import { GoJsonSyntaxError, describeGoJson, goInt64, goKeyMatches, parseGoJson, type GoJsonValue } from '../go/json.js';
import { parseGoVersion, type GoVersion } from '../go/version.js';

/**
 * A plugin's stdout decoded the way the agent decodes it (encoding/json into Nomad's
 * structs): keys matched case-insensitively, unknown keys ignored, the last duplicate
 * wins, only white space after the value, and every type mismatch an error.
 */

export type Decoded<T> = { ok: true; value: T } | { ok: false; error: string };

type FieldKind = 'string' | 'int64' | 'version';
type FieldValue = { string: string; int64: bigint; version: GoVersion | null };

function decodeStruct<S extends Record<string, FieldKind>>(
  text: string,
  fields: S,
): Decoded<{ [K in keyof S]?: FieldValue[S[K]] }> {
  let root: GoJsonValue;
  try {
    root = parseGoJson(text);
  } catch (err) {
    if (err instanceof GoJsonSyntaxError) return { ok: false, error: err.message };
    throw err;
  }
  const out: Record<string, unknown> = {};
  if (root.kind === 'null') return { ok: true, value: out as never };
  if (root.kind !== 'object') return { ok: false, error: `json: cannot unmarshal ${describeGoJson(root)} into a Go struct` };
  let firstError: string | undefined;
  for (const [key, value] of root.entries) {
    const name = Object.keys(fields).find((f) => key === f) ?? Object.keys(fields).find((f) => goKeyMatches(key, f));
    if (name === undefined) continue;
    const kind = fields[name]!;
    const decoded = decodeField(kind, value, name);
    if ('error' in decoded) firstError ??= decoded.error;
    else if (decoded.set) out[name] = decoded.value;
  }
  if (firstError !== undefined) return { ok: false, error: firstError };
  return { ok: true, value: out as never };
}

function decodeField(
  kind: FieldKind,
  value: GoJsonValue,
  name: string,
): { set: boolean; value?: unknown } | { error: string } {
  const mismatch = (goType: string) => ({
    error: `json: cannot unmarshal ${describeGoJson(value)} into Go struct field .${name} of type ${goType}`,
  });
  if (value.kind === 'null') return kind === 'version' ? { set: true, value: null } : { set: false };
  switch (kind) {
    case 'string':
      return value.kind === 'string' ? { set: true, value: value.value } : mismatch('string');
    case 'int64': {
      if (value.kind !== 'number') return mismatch('int64');
      const n = goInt64(value.raw);
      return n === undefined ? mismatch('int64') : { set: true, value: n };
    }
    case 'version': {
      if (value.kind !== 'string') return mismatch('version.Version');
      const parsed = parseGoVersion(value.value);
      return parsed.ok ? { set: true, value: parsed.version } : { error: parsed.error };
    }
  }
}

export interface DecodedFingerprint {
  version: GoVersion;
}

/** Fingerprint stdout. A missing or null version decodes in Go but crashes a real agent, so it is an error here. */
export function decodeFingerprintOutput(stdout: string): Decoded<DecodedFingerprint> {
  const result = decodeStruct(stdout, { version: 'version' });
  if (!result.ok) return result;
  const version = result.value.version;
  if (!version) {
    return { ok: false, error: 'fingerprint output has no "version" (a real Nomad agent crashes on this)' };
  }
  return { ok: true, value: { version } };
}

export interface DecodedCreate {
  /** Empty when the plugin gave none: the agent accepts that, but nobody can mount such a volume. */
  path: string;
  bytes: bigint;
}

export function decodeCreateOutput(stdout: string): Decoded<DecodedCreate> {
  const result = decodeStruct(stdout, { path: 'string', bytes: 'int64', error: 'string' });
  if (!result.ok) return result;
  return { ok: true, value: { path: result.value.path ?? '', bytes: result.value.bytes ?? 0n } };
}

/** The `error` a failed plugin wrote to stdout, if its stdout held such a document. */
export function decodeErrorOutput(stdout: string): string | undefined {
  const result = decodeStruct(stdout, { error: 'string' });
  return result.ok && result.value.error ? result.value.error : undefined;
}
