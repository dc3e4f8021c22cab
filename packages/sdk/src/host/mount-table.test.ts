import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  canonicalFolder,
  canonicalPath,
  deepestFirst,
  describeMount,
  entriesAt,
  entriesAtOrBelow,
  entriesBelow,
  identityOf,
  isRecordedMount,
  mountsAt,
  mountsAtOrBelow,
  mountsBelow,
  parseMountinfo,
  readMountTable,
  readMountTableSync,
  sameFilesystem,
  unescapeMountField,
  type MountEntry,
} from './mount-table.js';
import { removeTempDir, tempDir } from '../../../../test/support/kit.js';

/** The mount table as proc(5) writes /proc/<pid>/mountinfo, and the questions dhv asks of it. */

let dir = '';
afterEach(async () => {
  if (dir) await removeTempDir(dir);
  dir = '';
});

// proc(5)'s example line, optional fields and all, and the kernel's octal escapes (show_mountinfo: space, tab, newline, backslash).
const MOUNTINFO = [
  '36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue',
  '22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw',
  '812 22 7:3 / /srv/vols/a\\040b\\011c\\012d\\134e rw,nosuid shared:9 master:2 - ext4 /dev/loop3 rw,seclabel',
  // A name in UTF-8, read as latin1 bytes (as readMountTableSync reads the file), and a source with a space.
  '813 22 0:52 / /srv/vols/caf\u00c3\u00a9 rw - fuse.sshfs me@host:/my\\040dir rw',
  '814 22 0:53 / /srv/bare rw - tmpfs tmpfs',
  'not a mountinfo line',
  '815 22 0:54 / - tmpfs',
  '',
].join('\n');

describe('reading mountinfo', () => {
  it('reads each field, the optional ones skipped, and decodes escapes and UTF-8', () => {
    const [first, root, escaped, utf8, bare, ...rest] = parseMountinfo(MOUNTINFO);
    expect(rest).toEqual([]);
    expect(first).toEqual({
      mountId: 36,
      parentId: 35,
      device: '98:0',
      root: '/mnt1',
      mountPoint: '/mnt2',
      options: ['rw', 'noatime'],
      fsType: 'ext3',
      source: '/dev/root',
      superOptions: ['rw', 'errors=continue'],
    });
    expect(root?.mountPoint).toBe('/');
    expect(escaped).toMatchObject({
      mountId: 812,
      device: '7:3',
      mountPoint: '/srv/vols/a b\tc\nd\\e',
      options: ['rw', 'nosuid'],
    });
    expect(utf8).toMatchObject({ mountPoint: '/srv/vols/café', fsType: 'fuse.sshfs', source: 'me@host:/my dir' });
    expect(bare?.superOptions).toEqual([]);
  });

  it('undoes only three-digit octal escapes, bytes as UTF-8', () => {
    expect(unescapeMountField('plain')).toBe('plain');
    expect(unescapeMountField('\\303\\251t\\303\\251')).toBe('été');
    // The kernel escapes no other byte: a UTF-8 name is there as its bytes (read as latin1).
    expect(unescapeMountField('caf\u00c3\u00a9')).toBe('café');
    expect(unescapeMountField('a\\04b\\8')).toBe('a\\04b\\8');
  });

  it('reads a file as bytes, and gives nothing where there is no table', async () => {
    dir = await tempDir('mount-table');
    const file = join(dir, 'mountinfo');
    await writeFile(file, Buffer.from(MOUNTINFO, 'latin1'));
    expect(readMountTableSync(file).map((m) => m.mountPoint)).toEqual([
      '/mnt2',
      '/',
      '/srv/vols/a b\tc\nd\\e',
      '/srv/vols/café',
      '/srv/bare',
    ]);
    expect((await readMountTable(file)).length).toBe(5);
    expect(readMountTableSync(join(dir, 'none'))).toEqual([]);
  });
});

describe('where a mount is', () => {
  const table = parseMountinfo(
    [
      '22 1 8:1 / / rw - ext4 /dev/sda1 rw',
      '40 22 0:35 / /srv/v rw - tmpfs tmpfs rw',
      '41 40 0:36 / /srv/v/a rw - tmpfs tmpfs rw',
      '42 41 7:3 / /srv/v/a/deep rw - ext4 /dev/loop3 rw',
      '43 22 0:37 / /srv/vx rw - tmpfs tmpfs rw',
      '44 40 0:38 / /srv/v rw - tmpfs tmpfs rw',
    ].join('\n'),
  );
  const ids = (entries: MountEntry[]) => entries.map((m) => m.mountId);

  it('at a folder, below it (not a sibling that shares its prefix), and both; below / is every other mount', () => {
    expect(ids(entriesAt(table, '/srv/v'))).toEqual([40, 44]);
    expect(ids(entriesBelow(table, '/srv/v'))).toEqual([41, 42]);
    expect(ids(entriesAtOrBelow(table, '/srv/v'))).toEqual([40, 41, 42, 44]);
    expect(ids(entriesBelow(table, '/'))).toEqual([40, 41, 42, 43, 44]);
    expect(ids(entriesAtOrBelow(table, '/srv/v/a/deep'))).toEqual([42]);
  });

  it('comes off deepest first, so nested mounts go before what they sit on', () => {
    expect(deepestFirst(table).map((m) => m.mountPoint)).toEqual([
      '/srv/v/a/deep',
      '/srv/v/a',
      '/srv/vx',
      '/srv/v',
      '/srv/v',
      '/',
    ]);
  });

  it('reads in a message as type, source, mount ID and device', () => {
    expect(describeMount(table[3]!)).toBe('ext4 /dev/loop3 (mount 42, device 7:3)');
  });
});

describe('paths as the mount table names them', () => {
  it("resolves a path's parent but not its last component; a folder's links, its own included", async () => {
    dir = await tempDir('mount-table');
    await mkdir(join(dir, 'real', 'vol'), { recursive: true });
    await symlink(join(dir, 'real'), join(dir, 'link'));
    await symlink(join(dir, 'real', 'vol'), join(dir, 'real', 'vol-link'));
    await writeFile(join(dir, 'file'), '');
    expect(await canonicalPath(join(dir, 'link', 'vol'))).toBe(join(dir, 'real', 'vol'));
    expect(await canonicalPath(join(dir, 'link', 'vol-link'))).toBe(join(dir, 'real', 'vol-link'));
    expect(await canonicalFolder(join(dir, 'link', 'vol-link'))).toBe(join(dir, 'real', 'vol'));
    expect(await canonicalPath('/')).toBe('/');
    expect(await canonicalPath(join(dir, 'none', 'x'))).toBeUndefined();
    expect(await canonicalPath(join(dir, 'file', 'x', 'y'))).toBeUndefined();
    // A folder not made yet is named as its path would be.
    expect(await canonicalFolder(join(dir, 'link', 'later'))).toBe(join(dir, 'real', 'later'));
  });
});

describe("this process's mounts", () => {
  it('finds /proc mounted at its place and nothing below a fresh folder', async () => {
    dir = await tempDir('mount-table');
    const [proc] = (await mountsAt('/proc')).slice(-1);
    expect(proc).toMatchObject({ mountPoint: '/proc', fsType: 'proc' });
    expect((await mountsAtOrBelow('/proc')).map((m) => m.mountId)).toContain(proc!.mountId);
    expect(await mountsBelow(dir)).toEqual([]);
    expect(await mountsAtOrBelow(dir)).toEqual([]);
    expect(await mountsAt(join(dir, 'none', 'x'))).toEqual([]);
    expect(await mountsBelow(join(dir, 'none', 'x'))).toEqual([]);
  });

  it('knows the very mount it recorded, and the same filesystem under another mount ID', async () => {
    const proc = (await mountsAt('/proc')).at(-1)!;
    const recorded = await identityOf(proc);
    expect(recorded).toMatchObject({ mountId: proc.mountId, device: proc.device, mountPoint: '/proc', fsType: 'proc' });
    expect(recorded.rootBirth).toMatch(/^[0-9]+$/);
    expect(await isRecordedMount(proc, recorded)).toBe(true);
    expect(await isRecordedMount({ ...proc, mountId: proc.mountId + 1 }, recorded)).toBe(false);
    expect(await sameFilesystem({ ...proc, mountId: proc.mountId + 1 }, recorded)).toBe(true);
    expect(await sameFilesystem({ ...proc, device: '0:0' }, recorded)).toBe(false);
    expect(await sameFilesystem(proc, { ...recorded, rootBirth: '0' })).toBe(true);
    if (recorded.rootBirth !== '0') expect(await sameFilesystem(proc, { ...recorded, rootBirth: '1' })).toBe(false);
  });
});
