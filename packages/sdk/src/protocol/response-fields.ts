import type { Operation } from './operations.js';
import { INT64_MAX } from '../go/humanize.js';

/**
 * What a plugin may print on stdout for each operation, stated once (PROTOCOL.md,
 * "fingerprint", "create", "delete"; Nomad's structs in client/hostvolumemanager). The
 * response types, the runtime's check of a handler's answer, the Go decoder, the
 * conformance readers and the value a run decodes to are all derived from this table:
 * a field added here reaches every one of them, and code that builds a response by hand
 * stops compiling.
 */

/** How Go's encoding/json decodes a field: into a string, an int64, or a *version.Version. */
export type GoKind = 'string' | 'int64' | 'version';

export interface ResponseField {
  kind: GoKind;
  /** The field of Nomad's struct the JSON key fills (Go's errors name the key, not this). */
  goField: string;
  /**
   * The plugin must give it: the runtime refuses a handler's answer without it, the
   * conformance readers report it missing, and dhv's agent refuses its zero value (a real
   * agent crashes on a nil version, and publishes a volume with an empty path).
   * Optional fields that are missing are written and decoded as Go's zero value.
   */
  required: boolean;
  /** What the runtime requires of the value beyond its kind: a problem in words, or undefined. */
  check?: (value: never) => string | undefined;
}

export interface ResponseStruct {
  /** Nomad's struct, as encoding/json names it in "Go struct field <goStruct>.<key>". */
  goStruct: string;
  /** By JSON key (the struct's `json:"…"` tag). */
  fields: Readonly<Record<string, ResponseField>>;
  /** The struct also has `Error string \`json:"error"\``, read when the plugin fails. */
  hasError: boolean;
}

/** The `error` a failing plugin may print: `{"error": "message"}`. */
export const ERROR_FIELD = { key: 'error', kind: 'string', goField: 'Error' } as const;

/** Go's package of these structs, in "Go value of type <package>.<goStruct>". */
export const GO_PACKAGE = 'hostvolumemanager';

const absolutePath = (path: string) =>
  path.startsWith('/') ? undefined : `must be absolute, got ${JSON.stringify(path)}`;

const byteCount = (bytes: bigint) =>
  bytes >= 0n && bytes <= INT64_MAX ? undefined : `must be between 0 and 2^63-1, got ${bytes}`;

/** Each operation's response, field by field. */
export const RESPONSE_FIELDS = {
  fingerprint: {
    goStruct: 'PluginFingerprint',
    fields: { version: { kind: 'version', goField: 'Version', required: true } },
    hasError: false,
  },
  create: {
    goStruct: 'HostVolumePluginCreateResponse',
    fields: {
      path: { kind: 'string', goField: 'Path', required: true, check: absolutePath },
      bytes: { kind: 'int64', goField: 'SizeBytes', required: false, check: byteCount },
    },
    hasError: true,
  },
  delete: { goStruct: 'HostVolumePluginDeleteResponse', fields: {}, hasError: true },
} as const satisfies Record<Operation, ResponseStruct>;

/** The response table's shape, for code derived from it (and tests that extend it). */
export type ResponseTable = Record<Operation, ResponseStruct>;
