import { describe, expect, it } from 'vitest';
import { formatSize, parseSize, parseByteSize, SizeError, INT64_MAX, goParseBytes } from './humanize.js';
import { loadVectors } from '../__fixtures__/vectors.js';

interface ParseCase {
  input: string;
  ok: boolean;
  bytes?: bigint;
}
interface FormatCase {
  bytes: bigint;
  format: string;
}

const INT64_MIN = -(2n ** 63n);

describe('parseSize reads volume spec sizes as the Nomad CLI does (vectors: parse-capacity.json)', () => {
  for (const c of loadVectors<ParseCase>('parse-capacity')) {
    // Sizes of 2^63 and more wrap to int64's minimum in the Nomad CLI: we refuse them instead.
    const wrapsInNomad = c.ok && c.bytes === INT64_MIN;
    if (c.ok && !wrapsInNomad) {
      it(`${JSON.stringify(c.input)} is ${c.bytes ?? 0n} bytes`, () => {
        expect(parseSize(c.input)).toBe(c.bytes ?? 0n);
      });
    } else {
      it(`${JSON.stringify(c.input)} is refused${wrapsInNomad ? ' (Nomad wraps it to a negative size)' : ''}`, () => {
        expect(() => parseSize(c.input)).toThrow(SizeError);
      });
    }
  }

  it('names the input and the accepted units in its error', () => {
    expect(() => parseSize('12XB')).toThrow(/"12XB".*unknown unit "xb"/);
    expect(() => parseSize('8EiB')).toThrow(/too large/);
  });

  it('accepts the largest int64 that survives float64 rounding', () => {
    expect(parseSize('9223372036854774784')).toBe(9223372036854774784n);
    expect(parseSize('9223372036854774784')).toBeLessThanOrEqual(INT64_MAX);
  });
});

describe('formatSize prints capacities as `nomad volume status` does (vectors: format-capacity.json)', () => {
  for (const c of loadVectors<FormatCase>('format-capacity')) {
    it(`${c.bytes} bytes is ${c.format}`, () => {
      expect(formatSize(c.bytes)).toBe(c.format);
    });
  }

  it('takes numbers as well as bigints', () => {
    expect(formatSize(49283072)).toBe('47 MiB');
  });
});

describe('sizes at the int64 edge', () => {
  it('parseByteSize (command-line sizes the agent passes on) takes the largest int64 exactly and refuses one more', () => {
    expect(parseByteSize('9223372036854775807')).toBe(9223372036854775807n);
    expect(() => parseByteSize('9223372036854775808')).toThrow(
      /^invalid size "9223372036854775808": too large: the largest is 9223372036854775807 bytes$/,
    );
    expect(parseByteSize('1GiB')).toBe(2n ** 30n);
  });

  it('parseSize says what go-humanize made of a size too large, in exact integers', () => {
    expect(() => parseSize('9223372036854775807')).toThrow(
      /makes it 9223372036854775808 bytes, past the largest int64/,
    );
    expect(() => parseSize('18446744073709551617')).toThrow(
      /^invalid size "18446744073709551617": too large: .*more than 2\^64/,
    );
  });
});

describe("goParseBytes: go-humanize's ParseBytes, its words and its float64", () => {
  it('reads through a float64 and says what go-humanize says', () => {
    expect(goParseBytes('9223372036854775807')).toBe(2n ** 63n);
    expect(goParseBytes('1.5')).toBe(1n);
    expect(goParseBytes('2,048 KiB')).toBe(2097152n);
    expect(() => goParseBytes('2e9')).toThrow(/^unhandled size name: e9$/);
    expect(() => goParseBytes(' 1GiB')).toThrow(/^strconv\.ParseFloat: parsing "": invalid syntax$/);
    expect(() => goParseBytes('18446744073709551617')).toThrow(/^too large: 18446744073709551617$/);
  });
});
