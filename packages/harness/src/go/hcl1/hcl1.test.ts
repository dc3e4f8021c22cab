import { describe, expect, it } from 'vitest';
import { decodeObjectList, goMapToPlain, parseHcl1 } from './index.js';

const plain = (text: string) => goMapToPlain(decodeObjectList(parseHcl1(text)));
const parseError = (text: string) => {
  try {
    parseHcl1(text);
  } catch (err) {
    return (err as Error).message;
  }
  return undefined;
};

describe("HCL 1's HCL reader", () => {
  it('reads blocks as lists of maps, labels as nested keys, and lists', () => {
    expect(plain('a = 1\nb { c = "x" }\nd "e" { f = true }\ng = [1, "two", 3.5]\n')).toEqual({
      a: 1,
      b: [{ c: 'x' }],
      d: [{ e: [{ f: true }] }],
      g: [1, 'two', 3.5],
    });
  });

  it('keeps integers exact past 2^53, reads 0755 as octal and 0x1F as hexadecimal', () => {
    expect(plain('a = 9007199254740993\nb = 0755\nc = 0x1F\nd = -17\n')).toEqual({
      a: 9007199254740993n,
      b: 493,
      c: 31,
      d: -17,
    });
  });

  it('skips the three comment styles and keeps interpolation-looking strings as written', () => {
    expect(plain('# one\n// two\n/* three\n */ a = "${x} %{y} $${z}" # trailing\n')).toEqual({ a: '${x} %{y} $${z}' });
  });

  it('reads heredocs, <<- with the closing line indent taken off', () => {
    expect(plain('a = <<EOT\nline\n  two\nEOT\nb = <<-EOT\n    x\n      y\n    EOT\n')).toEqual({
      a: 'line\n  two\n',
      b: 'x\n  y\n',
    });
  });

  it('says where it stopped, in its own words', () => {
    expect(parseError('a = 0789\n')).toBe('At 1:9: illegal octal number');
    expect(parseError('a {\n b = 1\n')).toBe('At 3:2: object expected closing RBRACE got: EOF');
    expect(parseError('a = "x\n')).toBe('At 1:7: literal not terminated');
    expect(parseError('\ufeffa = 1')).toBe('At 1:1: illegal char');
  });
});

describe("HCL 1's JSON reader, lenient where it is", () => {
  it('drops every member after a missing comma, accepts a trailing comma, keeps the last duplicate', () => {
    expect(plain('{"a": "1" "b": "2", "c": "3"}')).toEqual({ a: '1' });
    expect(plain('{"a": "1", "b": {"c": 2,},}')).toEqual({ a: '1', b: [{ c: 2 }] });
    expect(plain('{"a": "1", "a": "2"}')).toEqual({ a: '2' });
  });

  it('flattens objects of objects into labelled blocks, and lists of objects into repeated blocks', () => {
    expect(plain('{"x": {"y": {"z": 1}}, "l": [{"a": 1}, {"a": 2}]}')).toEqual({
      x: [{ y: [{ z: 1 }] }],
      l: [{ a: 1 }, { a: 2 }],
    });
  });

  it('reads numbers as HCL tokens: integers exact, a fraction or exponent a float', () => {
    expect(plain('{"a": 12345678901234567, "b": 1.5, "c": 2e3}')).toEqual({ a: 12345678901234567n, b: 1.5, c: 2000 });
  });
});
