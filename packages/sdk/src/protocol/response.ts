import type { GoVersion } from '../go/version.js';
import type { Operation } from './operations.js';
import { RESPONSE_FIELDS, type ERROR_FIELD, type ResponseField } from './response-fields.js';

/**
 * The types of a response, derived from RESPONSE_FIELDS: what a handler returns, what the
 * agent's decoder makes of stdout, and what a run reports as its value.
 */

type Fields = Readonly<Record<string, ResponseField>>;
type Flat<T> = { -readonly [K in keyof T]: T[K] } & {};
type RequiredKeys<Fs extends Fields> = { [K in keyof Fs]: Fs[K]['required'] extends true ? K : never }[keyof Fs];

/** What a handler may give for each kind: bytes may be a number below 2^53. */
interface HandlerKinds {
  string: string;
  int64: bigint | number;
  version: string;
}
/** What Go decodes each kind to: a missing version is a nil pointer. */
interface DecodedKinds {
  string: string;
  int64: bigint;
  version: GoVersion | null;
}

export type HandlerResponseOf<Fs extends Fields> = Flat<
  { [K in RequiredKeys<Fs>]: HandlerKinds[Fs[K]['kind']] } & {
    [K in Exclude<keyof Fs, RequiredKeys<Fs>>]?: HandlerKinds[Fs[K]['kind']];
  }
>;
export type DecodedResponseOf<Fs extends Fields> = { [K in keyof Fs]: DecodedKinds[Fs[K]['kind']] };
/** A version as the agent stores it (`version`, normalized) and as the plugin wrote it (`rawVersion`). */
export type ResponseValueOf<Fs extends Fields> = Flat<
  { [K in keyof Fs]: Fs[K]['kind'] extends 'version' ? string : DecodedKinds[Fs[K]['kind']] } & {
    [K in keyof Fs as Fs[K]['kind'] extends 'version' ? RawKey<K & string> : never]: string;
  }
>;
type RawKey<K extends string> = `raw${Capitalize<K>}`;
/** A value in which the fields a plugin may leave out may be left out. */
export type ResponseAnswerOf<Fs extends Fields> = Flat<
  Omit<ResponseValueOf<Fs>, Exclude<keyof Fs, RequiredKeys<Fs>>> &
    Partial<Pick<ResponseValueOf<Fs>, Exclude<keyof Fs, RequiredKeys<Fs>> & keyof ResponseValueOf<Fs>>>
>;

type FieldsOf<Op extends Operation> = (typeof RESPONSE_FIELDS)[Op]['fields'];

export type FingerprintResponse = HandlerResponseOf<FieldsOf<'fingerprint'>>;
export type CreateResponse = HandlerResponseOf<FieldsOf<'create'>>;
/** Delete's response has no field: its handler returns nothing, and `{}` is written. */
export type DeleteResponse = void;
export type ErrorResponse = { [K in (typeof ERROR_FIELD)['key']]: string };

export interface ResponseByOperation {
  fingerprint: FingerprintResponse;
  create: CreateResponse;
  delete: DeleteResponse;
}

/** Each operation's stdout as Go decodes it into Nomad's struct: every field, missing ones as Go's zero value. */
export type DecodedResponse = { [Op in Operation]: DecodedResponseOf<FieldsOf<Op>> };

/** What each operation decodes to: the version, the volume's path and size, nothing. */
export type ResponseValue = { [Op in Operation]: ResponseValueOf<FieldsOf<Op>> };

/** What an in-process answer gives (the built-in mkdir, a test's fake): optional fields may be left out. */
export type ResponseAnswer = { [Op in Operation]: ResponseAnswerOf<FieldsOf<Op>> };

function rawKey(key: string): string {
  return `raw${key[0]!.toUpperCase()}${key.slice(1)}`;
}

function fieldsOf(operation: Operation): [string, ResponseField][] {
  return Object.entries(RESPONSE_FIELDS[operation].fields);
}

/** The value of a decoded response. A nil version must be refused before (a real agent crashes on it). */
export function responseValue<Op extends Operation>(operation: Op, decoded: DecodedResponse[Op]): ResponseValue[Op] {
  const from = decoded as Record<string, unknown>;
  const value: Record<string, unknown> = {};
  for (const [key, field] of fieldsOf(operation)) {
    if (field.kind !== 'version') {
      value[key] = from[key];
      continue;
    }
    const version = from[key] as GoVersion | null;
    if (version === null) throw new TypeError(`${operation} decoded a nil ${key}; refuse it before taking the value`);
    value[key] = version.normalized;
    value[rawKey(key)] = version.original;
  }
  return value as ResponseValue[Op];
}

/** Go's zero value of each kind, as a value holds it. */
const ZERO: Record<ResponseField['kind'], unknown> = { string: '', int64: 0n, version: '' };

/** An in-process answer as a value: exactly the table's fields, the ones left out as Go's zero value. */
export function answeredValue<Op extends Operation>(operation: Op, answer: ResponseAnswer[Op]): ResponseValue[Op] {
  const from = answer as Record<string, unknown>;
  const value: Record<string, unknown> = {};
  for (const [key, field] of fieldsOf(operation)) {
    value[key] = from[key] ?? ZERO[field.kind];
    if (field.kind === 'version') value[rawKey(key)] = from[rawKey(key)] ?? ZERO[field.kind];
  }
  return value as ResponseValue[Op];
}
