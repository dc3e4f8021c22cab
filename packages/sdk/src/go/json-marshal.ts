/** What encoding/json.Marshal writes, for the agent's DHV_PARAMETERS. */

const GO_ESCAPES: Record<string, string> = {
  '"': '\\"',
  '\\': '\\\\',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '<': '\\u003c',
  '>': '\\u003e',
  '&': '\\u0026',
  '\u2028': '\\u2028',
  '\u2029': '\\u2029',
};

/** A string as encoding/json.Marshal writes it (HTML-safe, Go 1.22+ escapes). */
export function goMarshalString(value: string): string {
  let out = '"';
  for (const ch of value) {
    const escaped = GO_ESCAPES[ch];
    if (escaped !== undefined) out += escaped;
    else if (ch < ' ') out += '\\u00' + ch.charCodeAt(0).toString(16).padStart(2, '0');
    else if (ch.length === 1 && ch >= '\ud800' && ch <= '\udfff')
      out += '\\ufffd'; // lone surrogate: not valid UTF-8
    else out += ch;
  }
  return out + '"';
}

/** json.Marshal of a map[string]string: keys sorted by their UTF-8 bytes; a nil map is `null`. */
export function goMarshalStringMap(map: Readonly<Record<string, string>> | null | undefined): string {
  if (map === null || map === undefined) return 'null';
  const keys = Object.keys(map).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  return '{' + keys.map((k) => `${goMarshalString(k)}:${goMarshalString(map[k]!)}`).join(',') + '}';
}
