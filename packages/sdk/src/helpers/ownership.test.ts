import { describe, expect, it } from 'vitest';
import { DEFAULT_VOLUME_MODE, MAX_OWNER_ID, parseModeParameter, parseOwnerParameter } from './ownership.js';

describe('mode, uid and gid parameters (Nomad mkdir semantics)', () => {
  it('reads octal modes, with or without 0o, setuid/setgid/sticky included', () => {
    expect(parseModeParameter('0755')).toEqual({ ok: true, value: 0o755 });
    expect(parseModeParameter('750')).toEqual({ ok: true, value: 0o750 });
    expect(parseModeParameter('0o1777')).toEqual({ ok: true, value: 0o1777 });
    expect(DEFAULT_VOLUME_MODE).toBe(0o700);
  });

  it('refuses modes that are not octal or go beyond 7777, quoting the value', () => {
    for (const bad of ['0999', 'rwxr-xr-x', '', '17777', '-1']) {
      const parsed = parseModeParameter(bad);
      expect(parsed.ok).toBe(false);
      if (!parsed.ok) expect(parsed.problem).toContain(JSON.stringify(bad));
    }
  });

  it('reads numeric IDs; -1 leaves the owner as is', () => {
    expect(parseOwnerParameter('uid', '0')).toEqual({ ok: true, value: 0 });
    expect(parseOwnerParameter('gid', String(MAX_OWNER_ID))).toEqual({ ok: true, value: MAX_OWNER_ID });
    expect(parseOwnerParameter('uid', '-1')).toEqual({ ok: true, value: undefined });
  });

  it('refuses names, negative IDs and IDs past the largest, naming the parameter', () => {
    for (const bad of ['root', '-2', String(MAX_OWNER_ID + 1), '1.5', '']) {
      const parsed = parseOwnerParameter('gid', bad);
      expect(parsed.ok).toBe(false);
      if (!parsed.ok) expect(parsed.problem).toMatch(/parameter "gid" must be a numeric group ID/);
    }
  });
});
