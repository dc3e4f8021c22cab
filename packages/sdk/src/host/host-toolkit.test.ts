import { writeFile, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { checkHost } from './host-tools.js';
import { createSparseImage, imageSize, removeFile, resizeImage } from './images.js';
import { detectFilesystem } from './filesystems.js';
import { removeTempDir, tempDir } from '../../../../test/support/kit.js';

// The host's own tools are not looked at: these are the ones missing.
const missing = vi.hoisted(() => new Set(['mkfs.xfs', 'xfs_growfs', 'fallocate']));
vi.mock('../helpers/system-tools.js', async (original) => ({
  ...(await original<typeof import('../helpers/system-tools.js')>()),
  findTool: (name: string) => {
    if (missing.has(name)) throw new Error(`${name} is missing`);
    return `/usr/sbin/${name}`;
  },
}));

let dir: string;
beforeEach(async () => {
  dir = await tempDir('host-toolkit');
});
afterEach(async () => {
  vi.restoreAllMocks();
  await removeTempDir(dir);
});

describe('checkHost', () => {
  it('refuses a plugin not running as root, naming it', () => {
    vi.spyOn(process as { getuid: () => number }, 'getuid').mockReturnValue(1000);
    expect(() => checkHost({ plugin: 'dhv-x' })).toThrow(/^dhv-x must run as root .* runs as uid 1000/);
    expect(() => checkHost({ plugin: 'dhv-x', root: false })).not.toThrow();
  });

  it('names one apt-get install line for every missing tool, each package once', () => {
    expect(() =>
      checkHost({ plugin: 'p', root: false, tools: ['mkfs.ext4', 'mkfs.xfs', 'xfs_growfs', 'fallocate'] }),
    ).toThrow(
      /^mkfs\.xfs, xfs_growfs, fallocate were not found in .*; install them \(Debian\/Ubuntu: apt-get install xfsprogs util-linux\)$/,
    );
    expect(() => checkHost({ plugin: 'p', root: false, tools: ['mkfs.ext4', 'losetup'] })).not.toThrow();
  });
});

describe('images', () => {
  it('makes a sparse image, refuses one already there, grows it, and reads its size', async () => {
    const image = join(dir, 'v.img');
    await createSparseImage(image, 1024n * 1024n);
    expect(await imageSize(image)).toBe(1024n * 1024n);
    await expect(createSparseImage(image, 10n)).rejects.toMatchObject({ code: 'EEXIST' });
    await resizeImage(image, 2n * 1024n * 1024n);
    expect(await imageSize(image)).toBe(2n * 1024n * 1024n);
    await removeFile(image);
    await removeFile(image);
    expect(await imageSize(image)).toBeUndefined();
  });

  it('refuses a symlink as an image', async () => {
    await writeFile(join(dir, 'target'), '');
    await symlink(join(dir, 'target'), join(dir, 'link.img'));
    await expect(imageSize(join(dir, 'link.img'))).rejects.toMatchObject({ code: 'EUNSAFEPATH' });
  });
});

describe('detectFilesystem', () => {
  it('reads ext4 and xfs from their superblock magic, and nothing from zeros', async () => {
    const ext4 = Buffer.alloc(2048);
    ext4.writeUInt16LE(0xef53, 1080);
    const xfs = Buffer.alloc(2048);
    xfs.write('XFSB', 0, 'latin1');
    await writeFile(join(dir, 'ext4'), ext4);
    await writeFile(join(dir, 'xfs'), xfs);
    await writeFile(join(dir, 'zeros'), Buffer.alloc(2048));
    expect(await detectFilesystem(join(dir, 'ext4'))).toBe('ext4');
    expect(await detectFilesystem(join(dir, 'xfs'))).toBe('xfs');
    expect(await detectFilesystem(join(dir, 'zeros'))).toBeUndefined();
  });
});
