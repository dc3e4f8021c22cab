import { describe, expect, it } from 'vitest';
import { encodeJson } from './bigint-json.js';
import { decodeJson } from './bigint-json-decode.js';

describe('JSON with bigints', () => {
  it('writes a bigint past 2^53 as a plain integer, indented when asked', () => {
    expect(encodeJson({ bytes: 2n ** 63n - 1n })).toBe('{"bytes":9223372036854775807}');
    expect(encodeJson({ bytes: 1n }, { indent: 2 })).toBe('{\n  "bytes": 1\n}');
  });

  it('writes bigints on either side of 2^53 exactly in one document, and leaves BigInt as it found it', () => {
    expect(encodeJson([2n ** 53n - 1n, 2n ** 53n, -(2n ** 53n), 0n, 'x'])).toBe(
      '[9007199254740991,9007199254740992,-9007199254740992,0,"x"]',
    );
    expect('toJSON' in BigInt.prototype).toBe(false);
  });

  it('reads every integer back as a bigint, exactly past 2^53, and other numbers as numbers', () => {
    expect(decodeJson('{"a":9223372036854775807,"b":[1,2.5],"c":"x"}')).toEqual({
      a: 9223372036854775807n,
      b: [1n, 2.5],
      c: 'x',
    });
    expect(decodeJson(encodeJson({ n: -(2n ** 60n), s: 'bigint:5' }))).toEqual({ n: -(2n ** 60n), s: 'bigint:5' });
  });

  it('throws on text that is not JSON', () => {
    expect(() => decodeJson('{"a":')).toThrow();
  });
});
