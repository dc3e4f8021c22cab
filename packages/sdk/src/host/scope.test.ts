import { mkdir, realpath, rm, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { inScope, teardownScope, type TeardownScope } from './scope.js';
import { removeTempDir, tempDir } from '../../../../test/support/kit.js';

let dir: string;
let scope: TeardownScope;
beforeEach(async () => {
  dir = await tempDir('scope');
  await mkdir(join(dir, 'vols', 'real', 'deep'), { recursive: true });
  await mkdir(join(dir, 'victim'));
  await symlink(join(dir, 'victim'), join(dir, 'vols', 'link'));
  await symlink(join(dir, 'victim'), join(dir, 'vols-link'));
  scope = (await teardownScope(join(dir, 'vols-link', '..', 'vols')))!;
});
afterEach(() => removeTempDir(dir));

describe('teardown scope', () => {
  it('names a path inside in the kernel’s terms, and leaves out what is outside, the scope itself, or reached through a link', async () => {
    const canonical = await realpath(join(dir, 'vols'));
    expect(scope.canonical).toBe(canonical);
    expect(await inScope(scope, join(scope.dir, 'real', 'deep'))).toBe(join(canonical, 'real', 'deep'));
    expect(await inScope(scope, join(scope.dir, 'missing', 'x'))).toBe(join(canonical, 'missing', 'x'));
    expect(await inScope(scope, join(scope.dir, 'link'))).toBeUndefined();
    expect(await inScope(scope, join(scope.dir, 'link', 'x'))).toBeUndefined();
    expect(await inScope(scope, scope.dir)).toBeUndefined();
    expect(await inScope(scope, '/')).toBeUndefined();
    expect(await inScope(scope, join(dir, 'victim'))).toBeUndefined();
  });

  it('keeps the folder it resolved when made, whatever link replaces it later', async () => {
    const made = (await teardownScope(join(dir, 'vols')))!;
    await rm(join(dir, 'vols'), { recursive: true });
    await symlink(join(dir, 'victim'), join(dir, 'vols'));
    expect(await inScope(made, join(dir, 'vols', 'x'))).toBe(join(made.canonical, 'x'));
  });
});
