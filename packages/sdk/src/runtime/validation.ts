import { INT64_MAX } from '../go/humanize.js';
import { isGoVersion } from '../go/version.js';
import type { Operation } from '../protocol/operations.js';
import { RESPONSE_FIELDS, type GoKind, type ResponseField } from '../protocol/response-fields.js';

/** How the runtime reads a request and checks a response; both are plain code, cheap to load. */
export { readRequest, InvalidRequestError } from '../protocol/request.js';

/** A handler's value of each kind, made ready to write, or a problem (the message goes after the field's name). */
const KINDS: Record<GoKind, (value: unknown) => { ok: unknown } | { problem: string }> = {
  string: (value) => (typeof value === 'string' ? { ok: value } : { problem: `must be a string, got ${typeof value}` }),
  int64: (value) => {
    if (typeof value !== 'bigint' && typeof value !== 'number')
      return { problem: `must be a number or a bigint, got ${typeof value}` };
    if (typeof value === 'number' && !Number.isSafeInteger(value))
      return { problem: `must be a whole number (a bigint above 2^53), got ${value}` };
    return { ok: value };
  },
  version: (value) =>
    typeof value === 'string' && isGoVersion(value)
      ? { ok: value }
      : { problem: `${JSON.stringify(value)} is not a valid go-version (like "1.0.0")` },
};

/** Go's zero value of each kind, written for an optional field the handler left out. */
const ZERO: Record<GoKind, unknown> = { string: '', int64: 0, version: undefined };

/**
 * Checks what a handler returned before it is written, field by field from the response
 * table: every required field present, each of its kind and passing its check, optional
 * ones filled with Go's zero value. Returns every problem, or the response holding exactly
 * the table's fields.
 */
export function checkResponse(
  operation: Operation,
  response: unknown,
): { ok: true; value: Record<string, unknown> } | { ok: false; problems: string[] } {
  const fields = Object.entries(RESPONSE_FIELDS[operation].fields as Record<string, ResponseField>);
  if (fields.length === 0) return { ok: true, value: {} };
  if (typeof response !== 'object' || response === null || Array.isArray(response)) {
    const example = Object.fromEntries(fields.map(([key, field]) => [key, field.kind === 'int64' ? 0 : '…']));
    return {
      ok: false,
      problems: [
        `expected an object like ${JSON.stringify(example)}, got ${response === null ? 'null' : Array.isArray(response) ? 'an array' : typeof response}`,
      ],
    };
  }
  const given = response as Record<string, unknown>;
  const value: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [key, field] of fields) {
    if (given[key] === undefined && !field.required) {
      value[key] = ZERO[field.kind];
      continue;
    }
    const read = KINDS[field.kind](given[key]);
    if ('problem' in read) {
      problems.push(`${key} ${read.problem}`);
      continue;
    }
    // A field's check is given an int64 as a bigint, whichever the handler used.
    const checked = field.kind === 'int64' ? BigInt(read.ok as bigint | number) : read.ok;
    const problem = (field.check as ((v: unknown) => string | undefined) | undefined)?.(checked) ?? beyondGo(checked);
    if (problem === undefined) value[key] = read.ok;
    else problems.push(`${key} ${problem}`);
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, value };
}

/** An int64 Go could not decode: the agent would refuse the whole response. */
function beyondGo(value: unknown): string | undefined {
  return typeof value === 'bigint' && (value < -INT64_MAX - 1n || value > INT64_MAX)
    ? `must fit Go's int64 (-2^63 to 2^63-1), got ${value}`
    : undefined;
}
