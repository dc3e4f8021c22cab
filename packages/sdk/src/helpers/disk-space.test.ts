import { afterEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { diskSpace } from './disk-space.js';
import { removeTempDir, tempDir } from '../../../../test/support/kit.js';

let savedPath: string | undefined;
let dir: string | undefined;

afterEach(async () => {
  if (savedPath !== undefined) process.env.PATH = savedPath;
  if (dir) await removeTempDir(dir);
  dir = undefined;
});

describe('diskSpace', () => {
  it('reports free and total bytes of a filesystem as bigints, with no PATH', async () => {
    savedPath = process.env.PATH;
    delete process.env.PATH;
    dir = await tempDir('disk');
    const space = await diskSpace(dir);
    expect(typeof space.free).toBe('bigint');
    expect(space.size).toBeGreaterThan(0n);
    expect(space.free).toBeLessThanOrEqual(space.size);
  });

  it('answers for a path that does not exist yet from its closest existing parent', async () => {
    dir = await tempDir('disk');
    const parent = await diskSpace(dir);
    const child = await diskSpace(join(dir, 'not', 'yet'));
    expect(child.size).toBe(parent.size);
  });
});
