import { ENV, REQUEST_FIELDS, type EnvName, type RequestField } from './variables.js';
import type { Operation } from './operations.js';
import { INT64_MAX } from '../go/humanize.js';
import { isUuid } from './uuid.js';

/**
 * Each operation's request as a plugin reads it from the environment. Every variable is
 * checked and every problem is reported together, so a misconfigured caller learns
 * everything that is wrong in one run. Plain code rather than a schema library: every
 * create and delete of every plugin pays for loading this, and at restore the agent
 * starts one such process per volume, all at once.
 */

export type Parameters = Record<string, string>;

/** What each request field holds once read. */
interface FieldTypes {
  volumesDir: string;
  pluginDir: string;
  namespace: string;
  volumeName: string;
  volumeId: string;
  nodeId: string;
  nodePool: string;
  capacityMinBytes: bigint;
  capacityMaxBytes: bigint;
  parameters: Parameters | null;
  createdPath: string;
}

type RequestOf<Fs extends readonly RequestField[]> = { [K in Fs[number]]: FieldTypes[K] };

export type FingerprintRequest = RequestOf<(typeof REQUEST_FIELDS)['fingerprint']>;
export type CreateRequest = RequestOf<(typeof REQUEST_FIELDS)['create']>;
export type DeleteRequest = RequestOf<(typeof REQUEST_FIELDS)['delete']>;
export interface RequestByOperation {
  fingerprint: FingerprintRequest;
  create: CreateRequest;
  delete: DeleteRequest;
}

/** A variable's value was refused; the message names the variable. */
class Problem {
  constructor(readonly message: string) {}
}

type Reader<T> = (value: string, env: EnvName) => T | Problem;

// An empty value is one problem, not also "not a UUID" or "not absolute".
const nonEmpty =
  <T>(read: Reader<T>): Reader<T> =>
  (value, env) =>
    value === '' ? new Problem(`${env} is empty`) : read(value, env);

const asIs: Reader<string> = (value) => value;

const absolutePath: Reader<string> = (value, env) =>
  value.startsWith('/') ? value : new Problem(`${env} must be an absolute path, got ${JSON.stringify(value)}`);

const optionalAbsolutePath: Reader<string> = (value, env) =>
  value === '' || value.startsWith('/')
    ? value
    : new Problem(`${env} must be an absolute path (or empty), got ${JSON.stringify(value)}`);

const uuid: Reader<string> = (value, env) =>
  isUuid(value) ? value : new Problem(`${env} must be a UUID (8-4-4-4-12 hex digits), got ${JSON.stringify(value)}`);

const capacity: Reader<bigint> = (value, env) => {
  if (!/^[0-9]+$/.test(value))
    return new Problem(`${env} must be a whole number of bytes, got ${JSON.stringify(value)}`);
  const bytes = BigInt(value);
  if (bytes > INT64_MAX) return new Problem(`${env} is larger than the largest int64 (${INT64_MAX}), got ${value}`);
  return bytes;
};

const parameters: Reader<Parameters | null> = (value, env) => {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return new Problem(`${env} is not JSON: ${JSON.stringify(value.slice(0, 80))}`);
  }
  if (parsed === null) return null;
  if (typeof parsed !== 'object' || Array.isArray(parsed))
    return new Problem(`${env} must be a JSON object of strings or null`);
  const bad = Object.entries(parsed as Record<string, unknown>).filter(([, v]) => typeof v !== 'string');
  if (bad.length > 0)
    return new Problem(`${env} values must be strings; not: ${bad.map(([k]) => JSON.stringify(k)).join(', ')}`);
  return parsed as Parameters;
};

/** How each request field is read from its variable. */
const FIELDS: { [F in RequestField]: Reader<FieldTypes[F]> } = {
  volumesDir: nonEmpty(absolutePath),
  pluginDir: nonEmpty(absolutePath),
  namespace: nonEmpty(asIs),
  volumeName: nonEmpty(asIs),
  volumeId: nonEmpty(uuid),
  nodeId: nonEmpty(asIs),
  nodePool: nonEmpty(asIs),
  capacityMinBytes: nonEmpty(capacity),
  capacityMaxBytes: nonEmpty(capacity),
  parameters: nonEmpty(parameters),
  createdPath: optionalAbsolutePath,
};

/**
 * Delete reads namespace and name as they come, empty included: the agent's cleanup
 * delete sends both empty (PROTOCOL.md, "The cleanup delete"), and refusing it would
 * leak the volume.
 */
const FIELDS_BY_OPERATION: Record<Operation, typeof FIELDS> = {
  fingerprint: FIELDS,
  create: FIELDS,
  delete: { ...FIELDS, namespace: asIs, volumeName: asIs },
};

export class InvalidRequestError extends Error {
  readonly code = 'EINVALIDREQUEST';
  constructor(
    readonly operation: Operation,
    readonly problems: string[],
  ) {
    super(`invalid ${operation} request: ${problems.join('; ')}`);
    this.name = 'InvalidRequestError';
  }
}

/** Reads and validates an operation's request from an environment; throws InvalidRequestError naming every problem. */
export function readRequest<Op extends Operation>(
  operation: Op,
  env: Readonly<Record<string, string | undefined>>,
): RequestByOperation[Op] {
  const request: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const field of REQUEST_FIELDS[operation] as readonly RequestField[]) {
    const name = ENV[field];
    const value = env[name];
    const read =
      value === undefined
        ? new Problem(`${name} is missing`)
        : (FIELDS_BY_OPERATION[operation][field] as Reader<unknown>)(value, name);
    if (read instanceof Problem) problems.push(read.message);
    else request[field] = read;
  }
  const { capacityMinBytes: min, capacityMaxBytes: max } = request as Partial<CreateRequest>;
  if (problems.length === 0 && min !== undefined && max !== undefined && max !== 0n && max < min) {
    problems.push(`${ENV.capacityMaxBytes} (${max}) is smaller than ${ENV.capacityMinBytes} (${min})`);
  }
  if (problems.length > 0) throw new InvalidRequestError(operation, problems);
  return request as RequestByOperation[Op];
}
