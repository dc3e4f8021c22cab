import { INT64_MAX } from '../go/humanize.js';
import type { CreateResponse } from '../protocol/response.js';

/** How the runtime reads a request and checks a create response; both are plain code, cheap to load. */
export { readRequest, InvalidRequestError } from '../protocol/request.js';

/**
 * Checks what a create handler returned before it is written: an absolute path and a
 * byte count that fits Go's int64 (missing means 0). Returns every problem, or the
 * response with its bytes filled in.
 */
export function checkCreateResponse(
  response: unknown,
): { ok: true; value: { path: string; bytes: bigint | number } } | { ok: false; problems: string[] } {
  if (typeof response !== 'object' || response === null || Array.isArray(response)) {
    return {
      ok: false,
      problems: [
        `expected an object like {"path": "/abs/path", "bytes": 0}, got ${response === null ? 'null' : Array.isArray(response) ? 'an array' : typeof response}`,
      ],
    };
  }
  const { path, bytes = 0 } = response as Partial<Record<keyof CreateResponse, unknown>>;
  const problems: string[] = [];
  if (typeof path !== 'string') problems.push(`path must be a string, got ${typeof path}`);
  else if (!path.startsWith('/')) problems.push(`path must be absolute, got ${JSON.stringify(path)}`);
  if (typeof bytes !== 'bigint' && typeof bytes !== 'number') {
    problems.push(`bytes must be a number or a bigint, got ${typeof bytes}`);
  } else if (typeof bytes === 'number' && !Number.isSafeInteger(bytes)) {
    problems.push(`bytes must be a whole number (a bigint above 2^53), got ${bytes}`);
  } else if (BigInt(bytes) < 0n || BigInt(bytes) > INT64_MAX) {
    problems.push(`bytes must be between 0 and 2^63-1, got ${bytes}`);
  }
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, value: { path: path as string, bytes: bytes as bigint | number } };
}
