import { describe, expect, it } from 'vitest';
import { goPrint, goPrintf, goSprint, goSprintln } from './fmt.js';

/** Each expectation is what Go's fmt prints for the same values (whole numbers as int64, the rest float64). */
describe("Go's fmt, as templates print", () => {
  it('pads and signs integers: width, -, 0 and +', () => {
    expect(goPrintf('%5d|%-5d|%05d|%+d|%05d', [42, 42, 42, 5, -42])).toBe('   42|42   |00042|+5|-0042');
    expect(goPrintf('%-8s|%8s', ['ab', 'ab'])).toBe('ab      |      ab');
  });

  it('prints hex, characters, quoted strings, bools and cut strings', () => {
    expect(goPrintf('%x|%X|%x', [255, 255, 'hi'])).toBe('ff|FF|6869');
    expect(goPrintf('%c|%q|%t|%.3s', [65, 'a"b', true, 'abcdef'])).toBe('A|"a\\"b"|true|abc');
    expect(goPrintf('100%%', [])).toBe('100%');
  });

  it('prints floats with %f, %e and %g, and %v in the exponent form below 1e-4 and from 1e6', () => {
    expect(goPrintf('%.2f|%8.3f|%f|%e|%.2e', [3.14159, 2.5, 2.5, 1234.5678, 1234.5678])).toBe(
      '3.14|   2.500|2.500000|1.234568e+03|1.23e+03',
    );
    expect(goPrintf('%.3g|%.3g|%.3g|%.2g|%g', [1234567.5, 3.14159, 100.25, 0.000012345, 0.00001])).toBe(
      '1.23e+06|3.14|100|1.2e-05|1e-05',
    );
    expect(goPrintf('%v %v %v %v', [2.5, 0.0001, 1234567.5, 123456.5])).toBe('2.5 0.0001 1.2345675e+06 123456.5');
    expect(goPrintf('%v', [-2.5e-7])).toBe('-2.5e-07');
  });

  it("names a value's type when the verb does not fit it, and says what is missing or extra", () => {
    expect(goPrintf('%t|%d|%s|%x|%f|%c|%z', ['x', 1.5, true, true, 'a', 'a', 'a'])).toBe(
      '%!t(string=x)|%!d(float64=1.5)|%!s(bool=true)|%!x(bool=true)|%!f(string=a)|%!c(string=a)|%!z(string=a)',
    );
    expect(goPrintf('%d', [])).toBe('%!d(MISSING)');
    expect(goPrintf('%d', [1, 'x', [2]])).toBe('1%!(EXTRA string=x, []interface {}=[2])');
  });

  it('prints operands as Sprint and Sprintln do, and a nil as text/template does', () => {
    expect(goSprint(['a', 1, 2, 'b', true, false])).toBe('a1 2btrue false');
    expect(goSprintln(['a', 1, null])).toBe('a 1 <nil>\n');
    expect(goPrint(null)).toBe('<no value>');
    expect(goPrint({ b: [1, 'x'], a: null })).toBe('map[a:<nil> b:[1 x]]');
  });

  it('prints any precision Go takes, rounding the exact value half to even as strconv does (never a JavaScript RangeError)', () => {
    expect(goPrintf('%.200f', [1.5])).toBe(`1.5${'0'.repeat(199)}`);
    expect(goPrintf('%.101e', [1.5])).toBe(`1.5${'0'.repeat(100)}e+00`);
    expect(goPrintf('%.150g|%.20f', [1.5, 0.1])).toBe('1.5|0.10000000000000000555');
    expect(goPrintf('%.0f %.0f %.2f %.1f', [2.5, 3.5, 0.125, 0.05])).toBe('2 4 0.12 0.1');
    expect(goPrintf('%.3g %.10g %g %.3e %e', [1234567.5, 0.000012345, 0.000012345, 0.0, 1e21])).toBe(
      '1.23e+06 1.2345e-05 1.2345e-05 0.000e+00 1.000000e+21',
    );
    expect(goPrintf('%.2g|%5.1f|%-8.2e|%08.3g', [99.5, -1.25, 12345.678, -3.14159])).toBe(
      '1e+02| -1.2|1.23e+04|-0003.14',
    );
    expect(goPrintf('%.1000001f', [1.5])).toHaveLength(1_000_003);
  });

  it('takes widths up to where fmt gives up, then ends the format with %!(NOVERB) as Go does', () => {
    expect(goPrintf('%1000001d', [42])).toHaveLength(1_000_001);
    expect(goPrintf('a%999999999999d|x', [42])).toBe('a%!(NOVERB)%!(EXTRA int64=42)');
    expect(goPrintf('%.99999999f|x', [1.5])).toBe('%!(NOVERB)%!(EXTRA float64=1.5)');
  });

  it('prints U+FFFD for %c of a number that is no code point', () => {
    expect(goPrintf('%c|%c|%c', [-3, 1114112, 0xd800])).toBe('\ufffd|\ufffd|\ufffd');
  });
});
