import { describe, expect, it } from 'vitest';
import { goInt64, goKeyMatches, goMarshalStringMap, parseGoJson, GoJsonSyntaxError } from './json.js';
import { loadVectors } from '../__fixtures__/vectors.js';

interface MarshalCase { parameters: Record<string, string> | null; DHV_PARAMETERS: string }

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

  it.each(['{"a":01}', '{"a":1.}', '{"a":-}', "{'a':1}", '{"a":1,}', '[1 2]', '"\t"', '{"a":"\\x"}'])('refuses %s', (text) => {
    expect(() => parseGoJson(text)).toThrow(GoJsonSyntaxError);
  });

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
