import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseMountinfo } from '@dhv/sdk/host';
import { mountPointsWithin } from './mounts.js';
import { removeTempDir, tempDir } from '../../../test/support/kit.js';

const MOUNTINFO = [
  '22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw',
  '40 22 0:35 / /srv/volumes/abc rw,relatime shared:20 - tmpfs tmpfs rw,size=1024k',
  '41 40 0:36 / /srv/volumes/abc/inner\\040dir rw - tmpfs tmpfs rw',
  '42 22 0:37 / /srv/volumes/abcdef rw - tmpfs tmpfs rw',
  '',
].join('\n');

let dir: string | undefined;
afterEach(async () => {
  if (dir) await removeTempDir(dir);
  dir = undefined;
});

describe('mount points', () => {
  it('reads mount points from mountinfo, decoding octal escapes', () => {
    expect(parseMountinfo(MOUNTINFO).map((m) => m.mountPoint)).toEqual([
      '/',
      '/srv/volumes/abc',
      '/srv/volumes/abc/inner dir',
      '/srv/volumes/abcdef',
    ]);
  });

  it('finds mount points at or below a directory, not beside it', async () => {
    dir = await tempDir('mkdir-mounts');
    const mountinfo = join(dir, 'mountinfo');
    await writeFile(mountinfo, MOUNTINFO.replaceAll('/srv/volumes', dir));
    await mkdir(join(dir, 'abc'));
    expect(await mountPointsWithin(join(dir, 'abc'), mountinfo)).toEqual([
      join(dir, 'abc'),
      join(dir, 'abc', 'inner dir'),
    ]);
  });

  it('finds nothing where /proc is not mounted', async () => {
    expect(await mountPointsWithin('/', '/no/such/mountinfo')).toEqual([]);
  });
});
