/**
 * JSON the way Go's encoding/json reads it, for where the protocol depends on Go's exact
 * behaviour: how the agent decodes a plugin's stdout into Nomad's structs. Matching keys to
 * fields is `json-unmarshal.ts`; writing DHV_PARAMETERS, `json-marshal.ts`.
 */

import { goQuote } from './strconv.js';

/** A parsed JSON value that keeps number literals as written and objects as ordered key/value pairs. */
export type GoJsonValue =
  | { kind: 'null' }
  | { kind: 'bool'; value: boolean }
  | { kind: 'string'; value: string }
  | { kind: 'number'; raw: string }
  | { kind: 'array'; items: GoJsonValue[] }
  | { kind: 'object'; entries: Array<[string, GoJsonValue]> };

export class GoJsonSyntaxError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
    this.name = 'GoJsonSyntaxError';
  }
}

/** encoding/json's nesting limit: more open arrays and objects than this is "exceeded max depth". */
export const GO_JSON_MAX_DEPTH = 10_000;

/**
 * Parses one JSON value followed by nothing but white space, as json.Unmarshal demands.
 * It reads bytes as Go does (a stray byte is named as Go names it, invalid UTF-8 inside a
 * string becomes U+FFFD byte by byte) and keeps its own stack, so no input up to any
 * size can overflow the JavaScript stack: nesting past Go's limit is Go's error.
 */
export function parseGoJson(input: string | Uint8Array): GoJsonValue {
  const bytes = typeof input === 'string' ? new TextEncoder().encode(input) : input;
  return new Parser(bytes).document();
}

/** Go's quoteChar: the offending byte as a rune, in single quotes, escaped as strconv.Quote escapes it. */
function quoteChar(c: number): string {
  if (c === 0x27) return `'\\''`;
  if (c === 0x22) return `'"'`;
  return `'${goQuote(String.fromCharCode(c)).slice(1, -1)}'`;
}

type Frame =
  { kind: 'array'; items: GoJsonValue[] } | { kind: 'object'; entries: Array<[string, GoJsonValue]>; key: string };

const SPACE = new Uint8Array(256);
for (const c of [0x20, 0x09, 0x0a, 0x0d]) SPACE[c] = 1;

class Parser {
  private pos = 0;
  private readonly stack: Frame[] = [];
  private readonly utf8 = new TextDecoder('utf-8');

  constructor(private readonly b: Uint8Array) {}

  document(): GoJsonValue {
    this.skipSpace();
    if (this.pos >= this.b.length) throw new GoJsonSyntaxError('unexpected end of JSON input', this.pos);
    const value = this.value();
    this.skipSpace();
    if (this.pos < this.b.length) this.fail('after top-level value');
    return value;
  }

  private skipSpace(): void {
    const b = this.b;
    while (this.pos < b.length && SPACE[b[this.pos]!] === 1) this.pos++;
  }

  private fail(context: string): never {
    if (this.pos >= this.b.length) throw new GoJsonSyntaxError('unexpected end of JSON input', this.pos);
    throw new GoJsonSyntaxError(`invalid character ${quoteChar(this.b[this.pos]!)} ${context}`, this.pos);
  }

  /** One whole value; containers are walked with this.stack, never by recursion. */
  private value(): GoJsonValue {
    const b = this.b;
    const base = this.stack.length;
    for (;;) {
      // Here a value starts.
      this.skipSpace();
      let done: GoJsonValue | undefined;
      const c = b[this.pos];
      if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
        if (this.stack.length >= GO_JSON_MAX_DEPTH) this.fail('exceeded max depth');
        this.pos++;
        this.skipSpace();
        if (c === 0x5b) {
          if (b[this.pos] === 0x5d) {
            this.pos++;
            done = { kind: 'array', items: [] };
          } else {
            this.stack.push({ kind: 'array', items: [] });
            continue;
          }
        } else if (b[this.pos] === 0x7d) {
          this.pos++;
          done = { kind: 'object', entries: [] };
        } else {
          this.stack.push({ kind: 'object', entries: [], key: this.objectKey() });
          continue;
        }
      } else {
        done = this.scalar();
      }
      // A value is complete: hand it to the enclosing containers, closing those that end here.
      for (;;) {
        if (this.stack.length === base) return done;
        const top = this.stack[this.stack.length - 1]!;
        this.skipSpace();
        if (top.kind === 'array') {
          top.items.push(done);
          if (b[this.pos] === 0x2c) {
            this.pos++;
            break;
          }
          if (b[this.pos] === 0x5d) {
            this.pos++;
            this.stack.pop();
            done = { kind: 'array', items: top.items };
            continue;
          }
          this.fail('after array element');
        } else {
          top.entries.push([top.key, done]);
          if (b[this.pos] === 0x2c) {
            this.pos++;
            this.skipSpace();
            top.key = this.objectKey();
            break;
          }
          if (b[this.pos] === 0x7d) {
            this.pos++;
            this.stack.pop();
            done = { kind: 'object', entries: top.entries };
            continue;
          }
          this.fail('after object key:value pair');
        }
      }
    }
  }

  private objectKey(): string {
    if (this.b[this.pos] !== 0x22) this.fail('looking for beginning of object key string');
    const key = this.string();
    this.skipSpace();
    if (this.b[this.pos] !== 0x3a) this.fail('after object key');
    this.pos++;
    return key;
  }

  private scalar(): GoJsonValue {
    const c = this.b[this.pos];
    switch (c) {
      case 0x22:
        return { kind: 'string', value: this.string() };
      case 0x74:
        return this.literal('true', { kind: 'bool', value: true });
      case 0x66:
        return this.literal('false', { kind: 'bool', value: false });
      case 0x6e:
        return this.literal('null', { kind: 'null' });
      default:
        if (c === 0x2d || (c !== undefined && c >= 0x30 && c <= 0x39)) return this.number();
        return this.fail('looking for beginning of value');
    }
  }

  private literal<T extends GoJsonValue>(word: string, result: T): T {
    for (let i = 0; i < word.length; i++) {
      if (this.b[this.pos] !== word.charCodeAt(i)) this.fail(`in literal ${word} (expecting '${word[i]}')`);
      this.pos++;
    }
    return result;
  }

  private number(): GoJsonValue {
    const b = this.b;
    const start = this.pos;
    const digit = () => this.pos < b.length && b[this.pos]! >= 0x30 && b[this.pos]! <= 0x39;
    if (b[this.pos] === 0x2d) {
      this.pos++;
      if (!digit()) this.fail('in numeric literal');
    }
    if (b[this.pos] === 0x30) this.pos++;
    else while (digit()) this.pos++;
    if (b[this.pos] === 0x2e) {
      this.pos++;
      if (!digit()) this.fail('after decimal point in numeric literal');
      while (digit()) this.pos++;
    }
    if (b[this.pos] === 0x65 || b[this.pos] === 0x45) {
      this.pos++;
      if (b[this.pos] === 0x2b || b[this.pos] === 0x2d) this.pos++;
      if (!digit()) this.fail('in exponent of numeric literal');
      while (digit()) this.pos++;
    }
    return { kind: 'number', raw: this.utf8.decode(b.subarray(start, this.pos)) };
  }

  private string(): string {
    const b = this.b;
    this.pos++; // opening quote
    const parts: string[] = [];
    let run = this.pos;
    const flush = (end: number) => {
      if (end > run) parts.push(this.utf8.decode(b.subarray(run, end)));
    };
    for (;;) {
      if (this.pos >= b.length) this.fail('in string literal');
      const c = b[this.pos]!;
      if (c === 0x22) {
        flush(this.pos);
        this.pos++;
        return parts.length === 1 ? parts[0]! : parts.join('');
      }
      if (c < 0x20) this.fail('in string literal');
      if (c === 0x5c) {
        flush(this.pos);
        this.pos++;
        parts.push(this.escape());
        run = this.pos;
        continue;
      }
      if (c < 0x80) {
        this.pos++;
        continue;
      }
      const width = utf8Width(b, this.pos);
      if (width === 0) {
        // Go's utf8.DecodeRune: every byte of an invalid sequence is one U+FFFD.
        flush(this.pos);
        parts.push('\ufffd');
        this.pos++;
        run = this.pos;
      } else {
        this.pos += width;
      }
    }
  }

  private escape(): string {
    const c = this.b[this.pos];
    this.pos++;
    switch (c) {
      case 0x22:
        return '"';
      case 0x5c:
        return '\\';
      case 0x2f:
        return '/';
      case 0x62:
        return '\b';
      case 0x66:
        return '\f';
      case 0x6e:
        return '\n';
      case 0x72:
        return '\r';
      case 0x74:
        return '\t';
      case 0x75: {
        const high = this.hex4();
        if (high >= 0xd800 && high <= 0xdbff && this.b[this.pos] === 0x5c && this.b[this.pos + 1] === 0x75) {
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
    let n = 0;
    for (let i = 0; i < 4; i++) {
      const c = this.b[this.pos];
      const v =
        c === undefined
          ? -1
          : c >= 0x30 && c <= 0x39
            ? c - 0x30
            : c >= 0x61 && c <= 0x66
              ? c - 0x57
              : c >= 0x41 && c <= 0x46
                ? c - 0x37
                : -1;
      if (v < 0) this.fail('in \\u hexadecimal character escape');
      n = n * 16 + v;
      this.pos++;
    }
    return n;
  }
}

/** The length of the valid UTF-8 sequence at `i` (Go's rules: no overlongs, no surrogates, at most U+10FFFF), or 0. */
function utf8Width(b: Uint8Array, i: number): number {
  const c = b[i]!;
  const cont = (k: number, lo = 0x80, hi = 0xbf) => {
    const x = b[i + k];
    return x !== undefined && x >= lo && x <= hi;
  };
  if (c >= 0xc2 && c <= 0xdf) return cont(1) ? 2 : 0;
  if (c === 0xe0) return cont(1, 0xa0) && cont(2) ? 3 : 0;
  if ((c >= 0xe1 && c <= 0xec) || c === 0xee || c === 0xef) return cont(1) && cont(2) ? 3 : 0;
  if (c === 0xed) return cont(1, 0x80, 0x9f) && cont(2) ? 3 : 0;
  if (c === 0xf0) return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
  if (c >= 0xf1 && c <= 0xf3) return cont(1) && cont(2) && cont(3) ? 4 : 0;
  if (c === 0xf4) return cont(1, 0x80, 0x8f) && cont(2) && cont(3) ? 4 : 0;
  return 0;
}

/** JavaScript values of parsed JSON with every number a `number`, as JSON.parse gives them. */
export type PlainJson = null | boolean | string | number | PlainJson[] | { [key: string]: PlainJson };
/** JavaScript values of parsed JSON with every integer literal a `bigint`, so none beyond 2^53 is rounded. */
export type PlainJsonWithBigints =
  null | boolean | string | bigint | number | PlainJsonWithBigints[] | { [key: string]: PlainJsonWithBigints };

/**
 * A parsed value as plain JavaScript values (objects with their keys as own properties,
 * a repeated key keeping its last value). With `integers: 'bigint'` an integer literal
 * becomes a bigint and any other number a `number`; by default every number is a `number`.
 */
export function goJsonToPlain(value: GoJsonValue, options: { integers: 'bigint' }): PlainJsonWithBigints;
export function goJsonToPlain(value: GoJsonValue, options?: { integers?: 'number' }): PlainJson;
export function goJsonToPlain(
  value: GoJsonValue,
  options: { integers?: 'bigint' | 'number' } = {},
): PlainJsonWithBigints {
  const convert = (v: GoJsonValue): PlainJsonWithBigints => {
    switch (v.kind) {
      case 'null':
        return null;
      case 'bool':
      case 'string':
        return v.value;
      case 'number':
        return options.integers === 'bigint' && /^-?[0-9]+$/.test(v.raw) ? BigInt(v.raw) : Number(v.raw);
      case 'array':
        return v.items.map(convert);
      case 'object':
        return Object.fromEntries(v.entries.map(([k, item]) => [k, convert(item)]));
    }
  };
  return convert(value);
}
