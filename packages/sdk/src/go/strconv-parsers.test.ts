import { describe, expect, it } from 'vitest';
import { goAtoi, goParseBool, goParseUint } from './strconv-parsers.js';

// Expected texts are Go's strconv on the same input (run once by hand, kept here as text).
const fail = (error: string) => ({ ok: false, error });

describe("Go's strconv parsers", () => {
  it.each([
    ['TRUE', { ok: true, value: true }],
    ['0', { ok: true, value: false }],
    ['tRUE', fail('strconv.ParseBool: parsing "tRUE": invalid syntax')],
    ['yes', fail('strconv.ParseBool: parsing "yes": invalid syntax')],
    ['', fail('strconv.ParseBool: parsing "": invalid syntax')],
  ])('ParseBool(%j)', (input, expected) => {
    expect(goParseBool(input)).toEqual(expected);
  });

  it.each([
    ['18446744073709551615', { ok: true, value: 18446744073709551615n }],
    ['18446744073709551616', fail('strconv.ParseUint: parsing "18446744073709551616": value out of range')],
    // Go reports the overflow where it happens, before it reaches the bad digit.
    ['99999999999999999999x', fail('strconv.ParseUint: parsing "99999999999999999999x": value out of range')],
    ['-1', fail('strconv.ParseUint: parsing "-1": invalid syntax')],
    ['+1', fail('strconv.ParseUint: parsing "+1": invalid syntax')],
    ['1_0', fail('strconv.ParseUint: parsing "1_0": invalid syntax')],
    ['2\x00', fail(String.raw`strconv.ParseUint: parsing "2\x00": invalid syntax`)],
  ])('ParseUint(%j, 10, 64)', (input, expected) => {
    expect(goParseUint(input, 10, 64)).toEqual(expected);
  });

  it.each([
    ['+12', { ok: true, value: 12n }],
    ['-9223372036854775808', { ok: true, value: -9223372036854775808n }],
    ['-9223372036854775809', fail('strconv.Atoi: parsing "-9223372036854775809": value out of range')],
    ['9223372036854775808', fail('strconv.Atoi: parsing "9223372036854775808": value out of range')],
    ['1e3', fail('strconv.Atoi: parsing "1e3": invalid syntax')],
  ])('Atoi(%j)', (input, expected) => {
    expect(goAtoi(input)).toEqual(expected);
  });
});
