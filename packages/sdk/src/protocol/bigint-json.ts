/**
 * JSON with bigints, the one codec of the project: Nomad's capacities are int64 and may
 * pass 2^53, so integers are written from bigints and read back into bigints exactly.
 */

/** JSON.stringify that writes a bigint as a plain integer. */
export function encodeJson(value: unknown, options: { indent?: number } = {}): string {
  // A fresh marker each time, so no string in `value` can be taken for a bigint.
  const marker = `\u0000bigint-${Math.random().toString(36).slice(2)}:`;
  const json = JSON.stringify(
    value,
    (_key, v: unknown) => (typeof v === 'bigint' ? `${marker}${v}` : v),
    options.indent,
  );
  const escapedMarker = JSON.stringify(marker)
    .slice(1, -1)
    .replace(/[\\^$.*+?()[\]{}|]/g, '\\$&');
  return json.replace(new RegExp(`"${escapedMarker}(-?[0-9]+)"`, 'g'), '$1');
}
