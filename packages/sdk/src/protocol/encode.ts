/** The one place that turns a response into the JSON document a plugin writes to stdout. */

/** JSON.stringify that writes bigints as plain integers, since create's `bytes` may exceed 2^53. */
export function encodeResponse(value: unknown): string {
  if (value === undefined) return '{}';
  return JSON.stringify(value, (_key, v) => (typeof v === 'bigint' ? `\u0000bigint:${v}` : v)).replace(
    /"\\u0000bigint:(-?[0-9]+)"/g,
    '$1',
  );
}

export function encodeError(message: string): string {
  return JSON.stringify({ error: message });
}
