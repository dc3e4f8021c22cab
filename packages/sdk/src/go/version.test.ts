import { describe, expect, it } from 'vitest';
import { isGoVersion, parseGoVersion } from './version.js';
import { loadVectors } from '../__fixtures__/vectors.js';

interface VersionCase {
  input: string;
  ok: boolean;
  normalized?: string;
}

describe('parseGoVersion accepts and normalizes fingerprint versions as hashicorp/go-version does (vectors: go-version.json)', () => {
  for (const c of loadVectors<VersionCase>('go-version')) {
    if (c.ok) {
      it(`${JSON.stringify(c.input)} is valid and stored as ${c.normalized}`, () => {
        const parsed = parseGoVersion(c.input);
        expect(parsed).toMatchObject({ ok: true, version: { normalized: c.normalized } });
        expect(isGoVersion(c.input)).toBe(true);
      });
    } else {
      it(`${JSON.stringify(c.input)} is refused`, () => {
        const parsed = parseGoVersion(c.input);
        expect(parsed.ok).toBe(false);
        expect(isGoVersion(c.input)).toBe(false);
      });
    }
  }

  it('explains a refusal the way go-version does', () => {
    expect(parseGoVersion('one')).toEqual({ ok: false, error: 'malformed version: one' });
  });
});
