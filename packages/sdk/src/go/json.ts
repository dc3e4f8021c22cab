/**
 * JSON the way Go's encoding/json reads and writes it, for the two places where the
 * protocol depends on Go's exact behaviour: how the agent decodes a plugin's stdout
 * into Nomad's structs, and how it marshals DHV_PARAMETERS.
 */

/** A parsed JSON value that keeps number literals as written and objects as ordered key/value pairs. */
export type GoJsonValue =
  | { kind: 'null' }
  | { kind: 'bool'; value: boolean }
  | { kind: 'string'; value: string }
  | { kind: 'number'; raw: string }
  | { kind: 'array'; items: GoJsonValue[] }
  | { kind: 'object'; entries: Array<[string, GoJsonValue]> };

export class GoJsonSyntaxError extends Error {
  constructor(message: string, readonly offset: number) {
    super(message);
    this.name = 'GoJsonSyntaxError';
  }
}

const MAX_DEPTH = 10_000; // encoding/json's nesting limit

/** Parses one JSON value followed by nothing but white space, as json.Unmarshal demands. */
export function parseGoJson(text: string): GoJsonValue {
  const parser = new Parser(text);
  parser.skipSpace();
  if (parser.atEnd()) throw new GoJsonSyntaxError('unexpected end of JSON input', parser.pos);
  const value = parser.value(0);
  parser.skipSpace();
  if (!parser.atEnd()) {
    throw new GoJsonSyntaxError(`invalid character ${quoteChar(text[parser.pos]!)} after top-level value`, parser.pos);
  }
  return value;
}

function quoteChar(c: string): string {
  if (c === "'") return `'\\''`;
  if (c === '"') return `'"'`;
  const code = c.codePointAt(0)!;
  if (code < 0x20) return `'\\x${code.toString(16).padStart(2, '0')}'`;
  return `'${c}'`;
}

class Parser {
  pos = 0;
  constructor(private readonly text: string) {}

  atEnd(): boolean {
    return this.pos >= this.text.length;
  }

  skipSpace(): void {
    const t = this.text;
    while (this.pos < t.length) {
      const c = t.charCodeAt(this.pos);
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) this.pos++;
      else break;
    }
  }

  private fail(context: string): never {
    if (this.atEnd()) throw new GoJsonSyntaxError('unexpected end of JSON input', this.pos);
    throw new GoJsonSyntaxError(`invalid character ${quoteChar(this.text[this.pos]!)} ${context}`, this.pos);
  }

  value(depth: number): GoJsonValue {
    if (depth > MAX_DEPTH) throw new GoJsonSyntaxError('exceeded max depth', this.pos);
    const c = this.text[this.pos];
    switch (c) {
      case '{':
        return this.object(depth);
      case '[':
        return this.array(depth);
      case '"':
        return { kind: 'string', value: this.string() };
      case 't':
        return this.literal('true', { kind: 'bool', value: true });
      case 'f':
        return this.literal('false', { kind: 'bool', value: false });
      case 'n':
        return this.literal('null', { kind: 'null' });
      default:
        if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) return this.number();
        return this.fail('looking for beginning of value');
    }
  }

  private literal<T extends GoJsonValue>(word: string, result: T): T {
    for (let i = 0; i < word.length; i++) {
      if (this.text[this.pos] !== word[i]) this.fail(`in literal ${word} (expecting '${word[i]}')`);
      this.pos++;
    }
    return result;
  }

  private number(): GoJsonValue {
    const start = this.pos;
    const t = this.text;
    const digit = () => this.pos < t.length && t[this.pos]! >= '0' && t[this.pos]! <= '9';
    if (t[this.pos] === '-') {
      this.pos++;
      if (!digit()) this.fail('in numeric literal');
    }
    if (t[this.pos] === '0') this.pos++;
    else while (digit()) this.pos++;
    if (t[this.pos] === '.') {
      this.pos++;
      if (!digit()) this.fail('after decimal point in numeric literal');
      while (digit()) this.pos++;
    }
    if (t[this.pos] === 'e' || t[this.pos] === 'E') {
      this.pos++;
      if (t[this.pos] === '+' || t[this.pos] === '-') this.pos++;
      if (!digit()) this.fail('in exponent of numeric literal');
      while (digit()) this.pos++;
    }
    return { kind: 'number', raw: t.slice(start, this.pos) };
  }

  private string(): string {
    const t = this.text;
    this.pos++; // opening quote
    let out = '';
    let chunk = this.pos;
    for (;;) {
      if (this.pos >= t.length) this.fail('in string literal');
      const code = t.charCodeAt(this.pos);
      if (code === 0x22) {
        out += t.slice(chunk, this.pos);
        this.pos++;
        return out;
      }
      if (code < 0x20) this.fail('in string literal');
      if (code === 0x5c) {
        out += t.slice(chunk, this.pos);
        this.pos++;
        out += this.escape();
        chunk = this.pos;
        continue;
      }
      if (code >= 0xd800 && code <= 0xdfff) {
        // A lone surrogate cannot come from UTF-8 text; Go would have replaced the bad bytes.
        const pair = code <= 0xdbff && (t.charCodeAt(this.pos + 1) & 0xfc00) === 0xdc00;
        if (!pair) {
          out += t.slice(chunk, this.pos) + '\ufffd';
          this.pos++;
          chunk = this.pos;
          continue;
        }
        this.pos++;
      }
      this.pos++;
    }
  }

  private escape(): string {
    const c = this.text[this.pos];
    this.pos++;
    switch (c) {
      case '"': return '"';
      case '\\': return '\\';
      case '/': return '/';
      case 'b': return '\b';
      case 'f': return '\f';
      case 'n': return '\n';
      case 'r': return '\r';
      case 't': return '\t';
      case 'u': {
        const high = this.hex4();
        if (high >= 0xd800 && high <= 0xdbff && this.text.startsWith('\\u', this.pos)) {
          const save = this.pos;
          this.pos += 2;
          const low = this.hex4();
          if (low >= 0xdc00 && low <= 0xdfff) return String.fromCharCode(high, low);
          this.pos = save;
        }
        // Go replaces an unpaired surrogate escape with U+FFFD.
        if (high >= 0xd800 && high <= 0xdfff) return '\ufffd';
        return String.fromCharCode(high);
      }
      default:
        this.pos--;
        return this.fail('in string escape code');
    }
  }

  private hex4(): number {
    const digits = this.text.slice(this.pos, this.pos + 4);
    for (let i = 0; i < 4; i++) {
      if (!/[0-9a-fA-F]/.test(this.text[this.pos] ?? '')) this.fail('in \\u hexadecimal character escape');
      this.pos++;
    }
    return parseInt(digits, 16);
  }

  private array(depth: number): GoJsonValue {
    this.pos++;
    const items: GoJsonValue[] = [];
    this.skipSpace();
    if (this.text[this.pos] === ']') {
      this.pos++;
      return { kind: 'array', items };
    }
    for (;;) {
      this.skipSpace();
      items.push(this.value(depth + 1));
      this.skipSpace();
      if (this.text[this.pos] === ',') { this.pos++; continue; }
      if (this.text[this.pos] === ']') { this.pos++; return { kind: 'array', items }; }
      this.fail('after array element');
    }
  }

  private object(depth: number): GoJsonValue {
    this.pos++;
    const entries: Array<[string, GoJsonValue]> = [];
    this.skipSpace();
    if (this.text[this.pos] === '}') {
      this.pos++;
      return { kind: 'object', entries };
    }
    for (;;) {
      this.skipSpace();
      if (this.text[this.pos] !== '"') this.fail('looking for beginning of object key string');
      const key = this.string();
      this.skipSpace();
      if (this.text[this.pos] !== ':') this.fail('after object key');
      this.pos++;
      this.skipSpace();
      entries.push([key, this.value(depth + 1)]);
      this.skipSpace();
      if (this.text[this.pos] === ',') { this.pos++; continue; }
      if (this.text[this.pos] === '}') { this.pos++; return { kind: 'object', entries }; }
      this.fail('after object key:value pair');
    }
  }
}

/**
 * Whether an object key matches a struct field's JSON name the way encoding/json
 * matches them: an exact match, or equal under Unicode simple case folding
 * (which also folds U+017F LONG S to "s" and U+212A KELVIN SIGN to "k").
 */
export function goKeyMatches(key: string, fieldName: string): boolean {
  if (key === fieldName) return true;
  const fold = (s: string) =>
    Array.from(s, (c) => (c === '\u017f' ? 's' : c === '\u212a' ? 'k' : c.length === 1 && c < '\u0080' ? c.toLowerCase() : c)).join('');
  return fold(key) === fold(fieldName);
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** strconv.ParseInt(raw, 10, 64) on a JSON number literal; undefined when Go would refuse it. */
export function goInt64(raw: string): bigint | undefined {
  if (!/^-?(0|[1-9][0-9]*)$/.test(raw)) return undefined;
  const n = BigInt(raw);
  return n < INT64_MIN || n > INT64_MAX ? undefined : n;
}

export function describeGoJson(value: GoJsonValue): string {
  switch (value.kind) {
    case 'number': return `number ${value.raw}`;
    case 'bool': return 'bool';
    default: return value.kind;
  }
}

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
    else if (ch.length === 1 && ch >= '\ud800' && ch <= '\udfff') out += '\\ufffd'; // lone surrogate: not valid UTF-8
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
