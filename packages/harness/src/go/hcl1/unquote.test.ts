import { describe, expect, it } from 'vitest';
import { unquoteGo, unquoteHcl } from './unquote.js';

/** What Go's strconv.Unquote (the JSON reader) and HCL 1's own Unquote (the HCL reader) give for the same text. */
describe('unquoting HCL 1 strings', () => {
  it("takes Go's escapes: the simple ones, hex, octal and Unicode", () => {
    expect(unquoteGo('"a\\tb\\n"')).toBe('a\tb\n');
    expect(unquoteGo('"\\x41\\101\\u00e9\\U0001F600"')).toBe('AAé😀');
    expect(unquoteGo('"\\a\\b\\f\\r\\v\\\\\\""')).toBe('\x07\b\f\r\v\\"');
    expect(unquoteGo('""')).toBe('');
    expect(unquoteHcl('"a\\tb"')).toBe('a\tb');
  });

  it('refuses what Go refuses: no quotes, a bare quote or newline, an unknown or short escape', () => {
    for (const bad of [
      '"abc',
      'abc"',
      '"',
      '"a\nb"',
      '"a"b"',
      '"\\"',
      '"\\q"',
      '"\\x4"',
      '"\\12"',
      '"\\400"',
      '"\\U00110000"',
    ])
      expect(() => unquoteGo(bad), bad).toThrow(/invalid syntax/);
  });

  it('keeps ${...} as written in HCL, escapes, quotes and newlines inside it included, and refuses one left open', () => {
    expect(unquoteHcl('"${a"b}"')).toBe('${a"b}');
    expect(unquoteHcl('"x${a\\n}y"')).toBe('x${a\\n}y');
    expect(unquoteHcl('"${a\nb}"')).toBe('${a\nb}');
    expect(() => unquoteHcl('"${a"')).toThrow(/invalid syntax/);
    expect(() => unquoteHcl('"a\nb"')).toThrow(/invalid syntax/);
  });
});
