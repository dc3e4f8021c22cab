import { describe, expect, it } from 'vitest';
import { parseGoJson, GoJsonSyntaxError } from './json.js';
import { goMarshalStringMap } from './json-marshal.js';
import { goInt64, goKeyMatches } from './json-unmarshal.js';
import { loadVectors } from '../__fixtures__/vectors.js';

interface MarshalCase {
  parameters: Record<string, string> | null;
  DHV_PARAMETERS: string;
}

describe('goMarshalStringMap writes DHV_PARAMETERS byte for byte as the agent does (vectors: marshal-parameters.json)', () => {
  for (const c of loadVectors<MarshalCase>('marshal-parameters')) {
    it(`${JSON.stringify(c.parameters)} becomes ${c.DHV_PARAMETERS}`, () => {
      expect(goMarshalStringMap(c.parameters)).toBe(c.DHV_PARAMETERS);
    });
  }

  it('sorts keys by their UTF-8 bytes, not by UTF-16 code units', () => {
    // U+FF5E sorts before U+1F600 in UTF-8 but after it in UTF-16.
    expect(goMarshalStringMap({ '\u{1F600}': 'b', '\uFF5E': 'a' })).toBe('{"\uFF5E":"a","\u{1F600}":"b"}');
  });
});

describe('parseGoJson reads one JSON value as json.Unmarshal does', () => {
  it('keeps number literals as written, so integers beyond 2^53 keep every digit', () => {
    expect(parseGoJson('{"bytes": 9223372036854775807}')).toEqual({
      kind: 'object',
      entries: [['bytes', { kind: 'number', raw: '9223372036854775807' }]],
    });
  });

  it('allows only white space after the value', () => {
    expect(() => parseGoJson('{} x')).toThrow("invalid character 'x' after top-level value");
    expect(() => parseGoJson('{}\n\t ')).not.toThrow();
  });

  it('reports an empty document the way Go does', () => {
    expect(() => parseGoJson('')).toThrow(new GoJsonSyntaxError('unexpected end of JSON input', 0));
  });

  it.each(['{"a":01}', '{"a":1.}', '{"a":-}', "{'a':1}", '{"a":1,}', '[1 2]', '"\t"', '{"a":"\\x"}'])(
    'refuses %s',
    (text) => {
      expect(() => parseGoJson(text)).toThrow(GoJsonSyntaxError);
    },
  );

  it('replaces unpaired surrogate escapes with U+FFFD, as Go does', () => {
    expect(parseGoJson('"\\ud800x"')).toEqual({ kind: 'string', value: '\ufffdx' });
  });
});

describe('goKeyMatches matches keys to struct fields as encoding/json does', () => {
  it.each([
    ['version', 'version', true],
    ['Version', 'version', true],
    ['VERSION', 'version', true],
    ['ver\u017fion', 'version', true], // LONG S folds to s
    ['\u212aey', 'key', true], // KELVIN SIGN folds to k
    ['versions', 'version', false],
    ['véRsion', 'version', false],
  ])('%s matches %s: %s', (key, field, expected) => {
    expect(goKeyMatches(key, field)).toBe(expected);
  });
});

describe('goInt64 reads an integer as strconv.ParseInt(s, 10, 64)', () => {
  it.each([
    ['0', 0n],
    ['-1', -1n],
    ['9223372036854775807', 2n ** 63n - 1n],
    ['-9223372036854775808', -(2n ** 63n)],
    ['9223372036854775808', undefined],
    ['5.0', undefined],
    ['2e2', undefined],
  ])('%s is %s', (raw, expected) => {
    expect(goInt64(raw)).toBe(expected);
  });
});

describe("parseGoJson cannot be blown up: every input is decoded as Go decodes it or refused with Go's error", () => {
  const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

  it("accepts 10,000 levels of nesting, Go's limit", () => {
    expect(() => parseGoJson(nested(10_000))).not.toThrow();
    expect(() => parseGoJson('{"a":'.repeat(9_999) + '{}' + '}'.repeat(9_999))).not.toThrow();
  });

  it.each([10_001, 100_000, 1_000_000])(
    'refuses %i levels with "exceeded max depth", without touching the stack',
    (depth) => {
      expect(() => parseGoJson(nested(depth))).toThrow(
        new GoJsonSyntaxError("invalid character '[' exceeded max depth", 10_000),
      );
    },
  );

  it('keeps a number of a million digits as written', () => {
    const digits = '9'.repeat(1_000_000);
    expect(parseGoJson(digits)).toEqual({ kind: 'number', raw: digits });
  });

  it('reads a 4 MiB string', () => {
    const value = 'x'.repeat(4 * 1024 * 1024);
    expect(parseGoJson(`"${value}"`)).toEqual({ kind: 'string', value });
  });

  it.each([
    ['two bytes that are no UTF-8', [0xff, 0xfe], '\ufffd\ufffd'],
    ['a cut-short sequence (one U+FFFD per byte, as Go)', [0xe2, 0x82], '\ufffd\ufffd'],
    ['an overlong encoding', [0xc0, 0x80], '\ufffd\ufffd'],
    ['an encoded surrogate', [0xed, 0xa0, 0x80], '\ufffd\ufffd\ufffd'],
    ['beyond U+10FFFF', [0xf4, 0x90, 0x80, 0x80], '\ufffd\ufffd\ufffd\ufffd'],
    ['valid text around a bad byte', [0x61, 0xc3, 0xa9, 0x80, 0x62], 'a\u00e9\ufffdb'],
  ])('replaces invalid UTF-8 in a string as Go does: %s', (_what, bytes, expected) => {
    expect(parseGoJson(Uint8Array.from([0x22, ...bytes, 0x22]))).toEqual({ kind: 'string', value: expected });
  });

  it.each([
    [[0xef, 0xbb, 0xbf, 0x7b, 0x7d], "invalid character 'ï' looking for beginning of value"], // a UTF-8 byte-order mark
    [[0x7b, 0x7d, 0x00], "invalid character '\\x00' after top-level value"],
    [[0x0c, 0x7b, 0x7d], "invalid character '\\f' looking for beginning of value"],
    [[0x7b, 0x7d, 0x80], "invalid character '\\u0080' after top-level value"],
    [[0x7b, 0x7d, 0xa0], "invalid character '\\u00a0' after top-level value"],
  ])('names a stray byte as Go does: %j', (bytes, message) => {
    expect(() => parseGoJson(Uint8Array.from(bytes))).toThrow(message);
  });
});
