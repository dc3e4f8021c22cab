/** JSON for `--json`: two-space indented, bigints (capacities may pass 2^53) written as plain integers. */
export function toJson(value: unknown): string {
  return JSON.stringify(value, (_k, v) => (typeof v === 'bigint' ? `\u0000bigint:${v}` : v), 2).replace(/"\\u0000bigint:(-?[0-9]+)"/g, '$1');
}
