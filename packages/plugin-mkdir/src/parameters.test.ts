import { describe, expect, it } from 'vitest';
import { PluginFailure } from '@dhv/sdk/plugin';
import { DEFAULT_MODE, formatMode, parseMkdirParameters } from './parameters.js';

function problemsOf(parameters: Record<string, string>): string[] {
  try {
    parseMkdirParameters(parameters);
  } catch (err) {
    expect(err).toBeInstanceOf(PluginFailure);
    expect((err as PluginFailure).code).toBe('EPARAMETER');
    return (err as PluginFailure).details.problems as string[];
  }
  throw new Error('expected the parameters to be refused');
}

describe('mkdir parameters', () => {
  it('defaults to mode 0700 and leaves owner and group as they are', () => {
    expect(parseMkdirParameters(null)).toEqual({ mode: DEFAULT_MODE, uid: undefined, gid: undefined });
    expect(parseMkdirParameters({})).toEqual({ mode: 0o700, uid: undefined, gid: undefined });
  });

  // As Nomad's built-in mkdir reads them (vectors/nomad-agent/builtin-mkdir.json).
  it.each([
    ['0700', 0o700],
    ['700', 0o700],
    ['0', 0],
    ['000750', 0o750],
    ['2775', 0o775], // Unix setuid, setgid and sticky are dropped
    ['07777', 0o777],
    ['20000775', 0o2775], // Go's own setgid bit sets it
  ])('reads mode %j as octal %o', (mode, expected) => {
    expect(parseMkdirParameters({ mode }).mode).toBe(expected);
  });

  it.each([
    ['0o755', 'invalid syntax'],
    ['0800', 'invalid syntax'],
    ['rwx', 'invalid syntax'],
    ['', 'invalid syntax'],
    ['0x1ff', 'invalid syntax'],
    ['-700', 'invalid syntax'],
    ['7 00', 'invalid syntax'],
    ['40000000000', 'value out of range'],
  ])("refuses mode %j in Nomad's words", (mode, why) => {
    expect(problemsOf({ mode })).toEqual([
      `invalid value for "mode": strconv.ParseUint: parsing ${JSON.stringify(mode)}: ${why} (mode is octal digits, such as "0750")`,
    ]);
  });

  it('reads uid and gid as Nomad does: Atoi, then the 32 bits of uid_t ("-1" leaves as is)', () => {
    expect(parseMkdirParameters({ uid: '0', gid: '4294967294' })).toMatchObject({ uid: 0, gid: 4294967294 });
    expect(parseMkdirParameters({ uid: '-1', gid: '4294967295' })).toMatchObject({ uid: undefined, gid: undefined });
    expect(parseMkdirParameters({ uid: '+1000', gid: '-5' })).toMatchObject({ uid: 1000, gid: 4294967291 });
    expect(parseMkdirParameters({ uid: '4294967296' })).toMatchObject({ uid: 0 });
  });

  it.each(['root', '', '1e3', ' 5', '0x10', '99999999999999999999'])(
    "refuses uid and gid %j in Nomad's words",
    (value) => {
      expect(problemsOf({ uid: value })[0]).toMatch(/^invalid value for "uid": strconv\.Atoi: parsing /);
      expect(problemsOf({ gid: value })[0]).toContain(`(gid is a numeric group ID, such as "1000")`);
      expect(problemsOf({ uid: value })[0]).toContain(`parsing ${JSON.stringify(value)}`);
    },
  );

  it('names every unknown parameter and every bad value in one error', () => {
    expect(() => parseMkdirParameters({ size: '1G', mode: 'x', owner: 'me' })).toThrow(
      /^invalid parameters: invalid value for "mode".*; unknown parameter "owner" \(dhv-mkdir accepts mode, uid, gid\); unknown parameter "size"/,
    );
  });

  it('formats modes the way people write them', () => {
    expect(formatMode(0o700)).toBe('0700');
    expect(formatMode(0o2750)).toBe('02750');
    expect(formatMode(0)).toBe('0000');
  });
});
