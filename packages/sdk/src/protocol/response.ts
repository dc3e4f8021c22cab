import * as z from 'zod/mini';
import { isGoVersion } from '../go/version.js';
import { INT64_MAX } from '../go/humanize.js';

/** Zod schemas for what a plugin writes to stdout, checked by the runtime before it is written. */

export const fingerprintResponseSchema = z.looseObject({
  version: z.string().check(
    z.refine(isGoVersion, {
      error: (issue) => `version ${JSON.stringify(issue.input)} is not a valid go-version (like "1.0.0")`,
    }),
  ),
});

const byteCount = z
  .union([z.bigint(), z.number()], {
    error: (issue) => `bytes must be a number or a bigint, got ${typeof issue.input}`,
  })
  .check(
    z.superRefine((n: bigint | number, ctx) => {
      if (typeof n === 'number' && !Number.isSafeInteger(n)) {
        ctx.addIssue({ code: 'custom', message: `bytes must be a whole number (a bigint above 2^53), got ${n}` });
      } else if (BigInt(n) < 0n || BigInt(n) > INT64_MAX) {
        ctx.addIssue({ code: 'custom', message: `bytes must be between 0 and 2^63-1, got ${n}` });
      }
    }),
  );

export const createResponseSchema = z.object({
  path: z.string().check(
    z.refine((p: string) => p.startsWith('/'), {
      error: (issue) => `path must be absolute, got ${JSON.stringify(issue.input)}`,
    }),
  ),
  bytes: z._default(byteCount, 0),
});

export const deleteResponseSchema = z.union([z.undefined(), z.void(), z.object({})]);

export const errorResponseSchema = z.object({ error: z.string() });

export type FingerprintResponse = z.input<typeof fingerprintResponseSchema>;
export type CreateResponse = z.input<typeof createResponseSchema>;
export type DeleteResponse = void;
export type ErrorResponse = z.infer<typeof errorResponseSchema>;

export interface ResponseByOperation {
  fingerprint: FingerprintResponse;
  create: CreateResponse;
  delete: DeleteResponse;
}
