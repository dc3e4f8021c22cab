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

  it.each([
    ['0700', 0o700],
    ['700', 0o700],
    ['0', 0],
    ['0o755', 0o755],
    ['2775', 0o2775],
    ['07777', 0o7777],
    ['000750', 0o750],
  ])('reads mode %j as octal %o', (mode, expected) => {
    expect(parseMkdirParameters({ mode }).mode).toBe(expected);
  });

  it.each(['0800', '9', 'rwx', '', '0x1ff', '10000', '-700', '7 00', '0o'])(
    'refuses mode %j, naming parameter and value',
    (mode) => {
      expect(problemsOf({ mode })).toEqual([
        `parameter "mode" must be an octal permission such as "0750" (at most 7777), got ${JSON.stringify(mode)}`,
      ]);
    },
  );

  it('reads uid and gid as numbers, "-1" as leave as is', () => {
    expect(parseMkdirParameters({ uid: '0', gid: '4294967294' })).toMatchObject({ uid: 0, gid: 4294967294 });
    expect(parseMkdirParameters({ uid: '-1', gid: '-1' })).toMatchObject({ uid: undefined, gid: undefined });
  });

  it.each(['root', '', '-2', '4294967295', '1e3', '+5', ' 5', '0x10'])('refuses uid and gid %j', (value) => {
    expect(problemsOf({ uid: value })[0]).toContain(`parameter "uid" must be a numeric user ID`);
    expect(problemsOf({ gid: value })[0]).toContain(`parameter "gid" must be a numeric group ID`);
    expect(problemsOf({ uid: value })[0]).toContain(`got ${JSON.stringify(value)}`);
  });

  it('names every unknown parameter and every bad value in one error', () => {
    expect(() => parseMkdirParameters({ size: '1G', mode: 'x', owner: 'me' })).toThrow(
      /^invalid parameters: parameter "mode".*; unknown parameter "owner" \(dhv-mkdir accepts mode, uid, gid\); unknown parameter "size"/,
    );
  });

  it('formats modes the way people write them', () => {
    expect(formatMode(0o700)).toBe('0700');
    expect(formatMode(0o2750)).toBe('02750');
    expect(formatMode(0)).toBe('0000');
  });
});
