import { describe, expect, it } from 'vitest';
import { DEFAULT_VOLUME_MODE, parseModeParameter, parseOwnerParameter, readMkdirParameter } from './ownership.js';

// Each case is one of vectors/nomad-agent/builtin-mkdir.json (Nomad's built-in mkdir on a real agent).
describe("mode, uid and gid parameters, read exactly as Nomad's built-in mkdir reads them", () => {
  it.each([
    ['0755', 0o755],
    ['755', 0o755],
    ['0', 0],
    ['777777', 0o777], // bits above 0777 that are not Go mode bits
    ['7777', 0o777], // Unix setuid, setgid and sticky are dropped
    ['2775', 0o775],
    ['1777', 0o777],
    ['4755', 0o755],
    ['20000775', 0o2775], // Go's own setgid bit (1<<22)
    ['44000755', 0o5755], // Go's setuid (1<<23) and sticky (1<<20)
    ['37777777777', 0o7777],
  ])('mode %j is %o for chmod', (value, mode) => {
    expect(parseModeParameter(value)).toEqual({ ok: true, value: mode });
  });

  it('gives no mode a default of 0700', () => {
    expect(DEFAULT_VOLUME_MODE).toBe(0o700);
  });

  it.each([
    ['0o755', 'invalid syntax'],
    ['0x1ed', 'invalid syntax'],
    ['493', 'invalid syntax'],
    ['8', 'invalid syntax'],
    ['', 'invalid syntax'],
    ['-1', 'invalid syntax'],
    ['+755', 'invalid syntax'],
    [' 755', 'invalid syntax'],
    ['7_55', 'invalid syntax'],
    ['40000000000', 'value out of range'],
  ])("refuses mode %j in Nomad's words (%s)", (value, why) => {
    const nomad = `invalid value for "mode": strconv.ParseUint: parsing ${JSON.stringify(value)}: ${why}`;
    expect(readMkdirParameter('mode', value)).toEqual({ ok: false, error: nomad });
    const parsed = parseModeParameter(value);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.problem.startsWith(nomad)).toBe(true);
  });

  it.each([
    ['1000', 1000],
    ['+1000', 1000],
    ['0', 0],
    ['-1', undefined],
    ['4294967295', undefined],
    // Exactly Nomad: Atoi, then the 32 bits chown's uid_t keeps.
    ['-5', 4294967291],
    ['4294967296', 0],
  ])('uid/gid %j is %s', (value, id) => {
    expect(parseOwnerParameter('uid', value)).toEqual({ ok: true, value: id });
    expect(parseOwnerParameter('gid', value)).toEqual({ ok: true, value: id });
  });

  it.each([
    ['alice', 'invalid syntax'],
    ['0x10', 'invalid syntax'],
    [' 1000', 'invalid syntax'],
    ['1.5', 'invalid syntax'],
    ['', 'invalid syntax'],
    ['99999999999999999999', 'value out of range'],
  ])("refuses uid/gid %j in Nomad's words (%s)", (value, why) => {
    const nomad = `invalid value for "gid": strconv.Atoi: parsing ${JSON.stringify(value)}: ${why}`;
    expect(readMkdirParameter('gid', value)).toEqual({ ok: false, error: nomad });
    const parsed = parseOwnerParameter('gid', value);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.problem).toBe(`${nomad} (gid is a numeric group ID, such as "1000")`);
  });
});
