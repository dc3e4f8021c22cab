import * as z from 'zod/mini';
import { ENV, REQUEST_FIELDS, type EnvName, type RequestField } from './variables.js';
import type { Operation } from './operations.js';
import { INT64_MAX } from '../go/humanize.js';
import { isUuid } from './uuid.js';

/**
 * Zod schemas for each operation's request as a plugin reads it from the environment.
 * Every variable is checked and every problem is reported together, so a
 * misconfigured caller learns everything that is wrong in one run. Written with
 * zod/mini: create and delete pay for loading them, and the classic API costs a plugin
 * about six times as much start-up.
 */

type Payload = z.core.ParsePayload;

function problem(ctx: Payload, message: string): never {
  ctx.issues.push({ code: 'custom', message, input: ctx.value });
  return z.NEVER as never;
}

const text = (env: EnvName) =>
  z.string({ error: (issue) => (issue.input === undefined ? `${env} is missing` : `${env} must be a string`) });

// abort: an empty value is one problem, not also "not a UUID" or "not absolute".
const nonEmpty = (env: EnvName) => text(env).check(z.minLength(1, { error: `${env} is empty`, abort: true }));

const absolutePath = (env: EnvName) =>
  nonEmpty(env).check(
    z.refine((value: string) => value.startsWith('/'), {
      error: (issue) => `${env} must be an absolute path, got ${JSON.stringify(issue.input)}`,
    }),
  );

const optionalAbsolutePath = (env: EnvName) =>
  text(env).check(
    z.refine((value: string) => value === '' || value.startsWith('/'), {
      error: (issue) => `${env} must be an absolute path (or empty), got ${JSON.stringify(issue.input)}`,
    }),
  );

const uuid = (env: EnvName) =>
  nonEmpty(env).check(
    z.refine(isUuid, {
      error: (issue) => `${env} must be a UUID (8-4-4-4-12 hex digits), got ${JSON.stringify(issue.input)}`,
    }),
  );

const capacity = (env: EnvName) =>
  z.pipe(
    nonEmpty(env),
    z.transform((value: string, ctx): bigint => {
      if (!/^[0-9]+$/.test(value)) return problem(ctx, `${env} must be a whole number of bytes, got ${JSON.stringify(value)}`);
      const bytes = BigInt(value);
      if (bytes > INT64_MAX) return problem(ctx, `${env} is larger than the largest int64 (${INT64_MAX}), got ${value}`);
      return bytes;
    }),
  );

export type Parameters = Record<string, string>;

const parameters = (env: EnvName) =>
  z.pipe(
    nonEmpty(env),
    z.transform((value: string, ctx): Parameters | null => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(value);
      } catch {
        return problem(ctx, `${env} is not JSON: ${JSON.stringify(value.slice(0, 80))}`);
      }
      if (parsed === null) return null;
      if (typeof parsed !== 'object' || Array.isArray(parsed)) {
        return problem(ctx, `${env} must be a JSON object of strings or null`);
      }
      const bad = Object.entries(parsed as Record<string, unknown>).filter(([, v]) => typeof v !== 'string');
      if (bad.length > 0) {
        return problem(ctx, `${env} values must be strings; not: ${bad.map(([k]) => JSON.stringify(k)).join(', ')}`);
      }
      return parsed as Parameters;
    }),
  );

/** How each request field is read from its variable. */
const FIELDS = {
  volumesDir: absolutePath,
  pluginDir: absolutePath,
  namespace: nonEmpty,
  volumeName: nonEmpty,
  volumeId: uuid,
  nodeId: nonEmpty,
  nodePool: nonEmpty,
  capacityMinBytes: capacity,
  capacityMaxBytes: capacity,
  parameters,
  createdPath: optionalAbsolutePath,
} satisfies Record<RequestField, (env: EnvName) => z.ZodMiniType>;

/**
 * Delete reads namespace and name as they come, empty included: the agent's cleanup
 * delete sends both empty (PROTOCOL.md, "The cleanup delete"), and refusing it would
 * leak the volume.
 */
const FIELDS_BY_OPERATION: Record<Operation, Record<RequestField, (env: EnvName) => z.ZodMiniType>> = {
  fingerprint: FIELDS,
  create: FIELDS,
  delete: { ...FIELDS, namespace: text, volumeName: text },
};

type FieldValue<F extends RequestField> = z.output<ReturnType<(typeof FIELDS)[F]>>;
type RequestOf<Fs extends readonly RequestField[]> = { [K in Fs[number]]: FieldValue<K> };

export type FingerprintRequest = RequestOf<(typeof REQUEST_FIELDS)['fingerprint']>;
export type CreateRequest = RequestOf<(typeof REQUEST_FIELDS)['create']>;
export type DeleteRequest = RequestOf<(typeof REQUEST_FIELDS)['delete']>;
export interface RequestByOperation {
  fingerprint: FingerprintRequest;
  create: CreateRequest;
  delete: DeleteRequest;
}

function requestSchema<Op extends Operation>(operation: Op) {
  const fields = REQUEST_FIELDS[operation] as readonly RequestField[];
  const shape = Object.fromEntries(fields.map((f) => [ENV[f], FIELDS_BY_OPERATION[operation][f](ENV[f])]));
  return z
    .pipe(
      z.object(shape),
      z.transform((env) => Object.fromEntries(fields.map((f) => [f, env[ENV[f]]])) as unknown as RequestByOperation[Op]),
    )
    .check(
      z.superRefine((request, ctx) => {
        const r = request as Partial<CreateRequest>;
        if (r.capacityMaxBytes !== undefined && r.capacityMinBytes !== undefined) {
          if (r.capacityMaxBytes !== 0n && r.capacityMaxBytes < r.capacityMinBytes) {
            ctx.addIssue({
              code: 'custom',
              message: `${ENV.capacityMaxBytes} (${r.capacityMaxBytes}) is smaller than ${ENV.capacityMinBytes} (${r.capacityMinBytes})`,
            });
          }
        }
      }),
    );
}

export const REQUEST_SCHEMAS = {
  fingerprint: requestSchema('fingerprint'),
  create: requestSchema('create'),
  delete: requestSchema('delete'),
};

export class InvalidRequestError extends Error {
  readonly code = 'EINVALIDREQUEST';
  constructor(readonly operation: Operation, readonly problems: string[]) {
    super(`invalid ${operation} request: ${problems.join('; ')}`);
    this.name = 'InvalidRequestError';
  }
}

/** Reads and validates an operation's request from an environment; throws InvalidRequestError naming every problem. */
export function readRequest<Op extends Operation>(
  operation: Op,
  env: Readonly<Record<string, string | undefined>>,
): RequestByOperation[Op] {
  const result = REQUEST_SCHEMAS[operation].safeParse(env);
  if (result.success) return result.data as RequestByOperation[Op];
  throw new InvalidRequestError(operation, result.error.issues.map((issue) => issue.message));
}
