import { describe, expect, it } from 'vitest';
import { findReferencePlugin } from './reference-plugins.js';

describe('the reference plugins dhv demo runs', () => {
  it('are found through their packages in a checkout', async () => {
    const found = await findReferencePlugin('dhv-mkdir');
    expect(found).toEqual({ file: expect.stringMatching(/plugin-mkdir\/dist\/dhv-mkdir$/) });
  });

  it('when not installed, point at the one-file install, never at a registry package that does not exist', async () => {
    const notInstalled = (specifier: string): string => {
      throw Object.assign(new Error(`Cannot find module '${specifier}'`), { code: 'MODULE_NOT_FOUND' });
    };
    const found = await findReferencePlugin('dhv-loopback', notInstalled);
    expect(found).toMatchObject({ missing: '@dhv/plugin-loopback' });
    const { fix } = found as { fix: string };
    expect(fix).toContain('npm install -g ./dhv-harness-<version>.tgz');
    expect(fix).not.toMatch(/npm install @dhv\//);
  });
});
