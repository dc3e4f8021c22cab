/**
 * JSON with bigints, the one codec of the project: Nomad's capacities are int64 and may
 * pass 2^53, so integers are written from bigints and read back into bigints exactly.
 */

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const MIN_SAFE = -MAX_SAFE;

/**
 * JSON.stringify that writes a bigint as a plain integer. A bigint a double holds exactly
 * is written as that number (JSON.stringify calls a bigint's `toJSON`, set for the
 * duration of this call only); a larger one as a marked string, whose quotes are then
 * taken off. No replacer function: one called for every value costs several times the
 * stringify itself on a large document (10,000 volumes).
 */
export function encodeJson(value: unknown, options: { indent?: number } = {}): string {
  // A fresh marker each time, so no string in `value` can be taken for a bigint.
  const marker = `\u0000bigint-${Math.random().toString(36).slice(2)}:`;
  let marked = false;
  const proto = BigInt.prototype as { toJSON?: unknown };
  const previous = Object.getOwnPropertyDescriptor(proto, 'toJSON');
  Object.defineProperty(proto, 'toJSON', {
    configurable: true,
    writable: true,
    value(this: bigint) {
      if (this >= MIN_SAFE && this <= MAX_SAFE) return Number(this);
      marked = true;
      return `${marker}${this}`;
    },
  });
  let json: string;
  try {
    json = JSON.stringify(value, undefined, options.indent);
  } finally {
    if (previous) Object.defineProperty(proto, 'toJSON', previous);
    else delete proto.toJSON;
  }
  if (!marked) return json;
  // Each marked string's quotes taken off by one pass of indexOf: a regular expression
  // replacing 20,000 of them in a 7 MB document costs several times this.
  const quotedMarker = `"${JSON.stringify(marker).slice(1, -1)}`;
  let out = '';
  let from = 0;
  for (let at = json.indexOf(quotedMarker); at !== -1; at = json.indexOf(quotedMarker, from)) {
    const digits = at + quotedMarker.length;
    const end = json.indexOf('"', digits);
    out += json.slice(from, at) + json.slice(digits, end);
    from = end + 1;
  }
  return out + json.slice(from);
}
