import { describe, expect, it } from 'vitest';
import { goQuote } from './strconv.js';

// Expected texts are Go 1.x's strconv.Quote of the same input (run once by hand, kept here as text).
describe('goQuote (Go strconv.Quote)', () => {
  it.each(
    [
      ['', '""'],
      ['abc', '"abc"'],
      [' ~', '" ~"'],
      ['a"b\\c', String.raw`"a\"b\\c"`],
      ['\x07\b\f\n\r\t\v', String.raw`"\a\b\f\n\r\t\v"`],
      ['\x00\x1f\x7f', String.raw`"\x00\x1f\x7f"`],
      ['é日本', '"é日本"'],
      ['\u{1F600}', '"\u{1F600}"'],
      ['\ufffd', '"\ufffd"'],
    ].map(([input, go]) => ({ input: input!, go: go! })),
  )('quotes into $go as Go does', ({ input, go }) => {
    expect(goQuote(input)).toBe(go);
  });

  it('escapes each rune Go does not print: C1 controls, no-break space, format characters, line and paragraph separators, unassigned runes', () => {
    const runes = [0x80, 0x9f, 0xa0, 0xad, 0x200b, 0x2028, 0x2029, 0xfeff, 0x378, 0x1d173, 0xe0001, 0x10ffff];
    expect(goQuote(String.fromCodePoint(...runes))).toBe(
      String.raw`"\u0080\u009f\u00a0\u00ad\u200b\u2028\u2029\ufeff\u0378\U0001d173\U000e0001\U0010ffff"`,
    );
  });

  it.each(
    [
      [[0xff], String.raw`"\xff"`],
      [[0x61, 0xc3], String.raw`"a\xc3"`],
      [[0xc0, 0x80], String.raw`"\xc0\x80"`],
      [[0xed, 0xa0, 0x80], String.raw`"\xed\xa0\x80"`],
      [[0xf4, 0x90, 0x80, 0x80], String.raw`"\xf4\x90\x80\x80"`],
      [[0xc3, 0xa9, 0xe6, 0x97, 0xa5], '"é日"'],
    ].map(([bytes, go]) => ({ bytes: bytes as number[], go: go as string })),
  )('quotes the bytes $bytes into $go, byte by byte where the UTF-8 is invalid', ({ bytes, go }) => {
    expect(goQuote(new Uint8Array(bytes))).toBe(go);
  });

  it('quotes a lone surrogate as the U+FFFD that Node hands Go for it', () => {
    expect(goQuote('a\ud800b')).toBe('"a\ufffdb"');
  });
});
