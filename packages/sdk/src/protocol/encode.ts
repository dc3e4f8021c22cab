/** The one place that turns a response into the JSON document a plugin writes to stdout. */

/** JSON.stringify that writes bigints as plain integers, since create's `bytes` may exceed 2^53. */
export function encodeResponse(value: unknown): string {
  if (value === undefined) return '{}';
  // A fresh marker each time, so no string a plugin returns can be taken for a bigint.
  const marker = `\u0000bigint-${Math.random().toString(36).slice(2)}:`;
  const json = JSON.stringify(value, (_key, v) => (typeof v === 'bigint' ? `${marker}${v}` : v));
  const escapedMarker = JSON.stringify(marker).slice(1, -1).replace(/[\\^$.*+?()[\]{}|]/g, '\\$&');
  return json.replace(new RegExp(`"${escapedMarker}(-?[0-9]+)"`, 'g'), '$1');
}

export function encodeError(message: string): string {
  return JSON.stringify({ error: message });
}
