/** The one place that turns a response into the JSON document a plugin writes to stdout. */
import { encodeJson } from './bigint-json.js';
import { ERROR_FIELD } from './response-fields.js';

/** The response as one JSON line, bigints as plain integers, since create's `bytes` may exceed 2^53. */
export function encodeResponse(value: unknown): string {
  if (value === undefined) return '{}';
  return encodeJson(value);
}

export function encodeError(message: string): string {
  return JSON.stringify({ [ERROR_FIELD.key]: message });
}
