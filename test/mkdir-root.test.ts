import { execFile } from 'node:child_process';
import { mkdir, readFile, stat, statfs, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import {
  create,
  createRequest,
  deleteRequest,
  listTree,
  modeOf,
  newVolumeId,
  remove,
  wrapPlugin,
  useBuiltPlugin,
} from './support/mkdir-plugin.js';
import { tempDir, removeTempDir, skipRootTests } from './support/kit.js';

const run = promisify(execFile);

/**
 * dhv-mkdir on real filesystems and with real ownership: needs root (CI is root). Each
 * test's mounts are registered for unmounting before anything is asserted.
 */
describe.skipIf(skipRootTests('dhv-mkdir as root'))('dhv-mkdir as root', () => {
  const plugin = useBuiltPlugin();

  let dir: string | undefined;
  const mounts: string[] = [];
  afterEach(async () => {
    for (const point of mounts.splice(0).reverse()) {
      await run('/usr/bin/umount', [point]).catch(() => run('/usr/bin/umount', ['-l', point]));
    }
    await removeTempDir(dir);
    dir = undefined;
  });

  async function tmpfs(point: string, size: string): Promise<void> {
    await mkdir(point, { recursive: true });
    await run('/usr/bin/mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0755`, 'dhv-mkdir-test', point]);
    mounts.push(point);
  }

  async function volumesDirOnTmpfs(size: string): Promise<string> {
    dir = await tempDir();
    const volumesDir = join(dir, 'disk', 'volumes');
    await tmpfs(join(dir, 'disk'), size);
    return volumesDir;
  }

  describe('ownership', () => {
    it('sets uid and gid, then the mode exactly (setgid survives the chown)', async () => {
      dir = await tempDir();
      const volumesDir = join(dir, 'volumes');
      const result = await create(
        plugin.executable,
        createRequest(volumesDir, newVolumeId(), { parameters: { uid: '4321', gid: '8765', mode: '20000750' } }), // Go's setgid bit, as Nomad's mkdir reads it
      );
      const stats = await stat(result.path);
      expect([stats.uid, stats.gid]).toEqual([4321, 8765]);
      expect((await modeOf(result.path)).toString(8)).toBe('2750');
    });

    it('changes only the owner when only uid is given, and only the group when only gid is given', async () => {
      dir = await tempDir();
      const volumesDir = join(dir, 'volumes');
      const byUid = await create(
        plugin.executable,
        createRequest(volumesDir, newVolumeId(), { parameters: { uid: '1001' } }),
      );
      const byGid = await create(
        plugin.executable,
        createRequest(volumesDir, newVolumeId(), { parameters: { gid: '1002' } }),
      );
      const u = await stat(byUid.path);
      const g = await stat(byGid.path);
      expect([u.uid, u.gid]).toEqual([1001, 0]);
      expect([g.uid, g.gid]).toEqual([0, 1002]);
    });

    it('leaves the owner as is for uid "-1", as the built-in mkdir does', async () => {
      dir = await tempDir();
      const result = await create(
        plugin.executable,
        createRequest(join(dir, 'volumes'), newVolumeId(), { parameters: { uid: '-1', gid: '-1' } }),
      );
      const stats = await stat(result.path);
      expect([stats.uid, stats.gid]).toEqual([0, 0]);
    });

    it('never changes the owner of an existing volume', async () => {
      dir = await tempDir();
      const volumesDir = join(dir, 'volumes');
      const id = newVolumeId();
      await create(plugin.executable, createRequest(volumesDir, id, { parameters: { uid: '1001', gid: '1001' } }));
      await create(
        plugin.executable,
        createRequest(volumesDir, id, { parameters: { uid: '2002', gid: '2002', mode: '0777' } }),
      );
      const stats = await stat(join(volumesDir, id));
      expect([stats.uid, stats.gid, stats.mode & 0o7777]).toEqual([1001, 1001, 0o700]);
    });

    it('removes the directory it made when chown fails, and says so', async () => {
      // In a user namespace that maps only root, the kernel refuses a chown to any other
      // uid (EINVAL): a real chown failure, with everything else working.
      dir = await tempDir();
      const volumesDir = join(dir, 'volumes');
      await mkdir(volumesDir);
      const wrapper = await wrapPlugin(
        dir,
        plugin.executable,
        'in-userns',
        `[ "$DHV_NS" = 1 ] || DHV_NS=1 exec /usr/bin/unshare --map-root-user "$0" "$@"\nunset DHV_NS`,
      );
      const id = newVolumeId();
      const err = await create(
        wrapper,
        createRequest(volumesDir, id, { parameters: { uid: '4321', mode: '0750' } }),
      ).catch((e) => e);
      expect(err).toMatchObject({ code: 'PLUGIN_FAILED' });
      expect(err.pluginMessage).toContain(`could not change the owner of ${join(volumesDir, id)} to uid 4321`);
      expect(err.pluginMessage).toContain('the directory was removed again');
      expect(await listTree(volumesDir)).toEqual([]);
    });
  });

  describe('capacity on a small filesystem', () => {
    it('reports the free space of the filesystem the volume lives on', async () => {
      const volumesDir = await volumesDirOnTmpfs('16m');
      const result = await create(plugin.executable, createRequest(volumesDir, newVolumeId()));
      const fs = await statfs(result.path, { bigint: true });
      expect(result.bytes).toBe(fs.bavail * fs.bsize);
      expect(result.bytes).toBeLessThanOrEqual(16n * 1024n * 1024n);
    });

    it('caps bytes at capacity_max', async () => {
      const volumesDir = await volumesDirOnTmpfs('16m');
      const result = await create(
        plugin.executable,
        createRequest(volumesDir, newVolumeId(), { capacityMaxBytes: 5_000_000n }),
      );
      expect(result.bytes).toBe(5_000_000n);
    });

    it('fails when capacity_min is above the free space, with both numbers in human units, and leaves nothing', async () => {
      const volumesDir = await volumesDirOnTmpfs('8m');
      const err = await create(
        plugin.executable,
        createRequest(volumesDir, newVolumeId(), { capacityMinBytes: 1n << 30n }),
      ).catch((e) => e);
      expect(err).toMatchObject({ code: 'PLUGIN_FAILED' });
      expect(err.pluginMessage).toMatch(
        /needs 1\.0 GiB \(1073741824 bytes\), but the filesystem holding .* has 8\.0 MiB \(8388608 bytes\) free/,
      );
      expect(await listTree(join(dir!, 'disk'))).toEqual([]);
    });

    it('succeeds when capacity_min fits exactly', async () => {
      const volumesDir = await volumesDirOnTmpfs('8m');
      await mkdir(volumesDir);
      const result = await create(
        plugin.executable,
        createRequest(volumesDir, newVolumeId(), { capacityMinBytes: 8n * 1024n * 1024n }),
      );
      expect(result.bytes).toBe(8n * 1024n * 1024n);
    });

    it('reports the volume path’s own filesystem for an existing volume that is a mount point', async () => {
      dir = await tempDir();
      const volumesDir = join(dir, 'volumes');
      const id = newVolumeId();
      await tmpfs(join(volumesDir, id), '4m');
      const result = await create(plugin.executable, createRequest(volumesDir, id));
      expect(result.bytes).toBe(4n * 1024n * 1024n);
    });
  });

  describe('delete and mounts', () => {
    it('refuses to delete a volume with a filesystem mounted inside it, and erases none of its files', async () => {
      dir = await tempDir();
      const volumesDir = join(dir, 'volumes');
      const id = newVolumeId();
      const { path } = await create(plugin.executable, createRequest(volumesDir, id));
      const inner = join(path, 'data');
      await tmpfs(inner, '1m');
      await writeFile(join(inner, 'precious'), 'keep me');
      const err = await remove(plugin.executable, deleteRequest(volumesDir, id)).catch((e) => e);
      expect(err).toMatchObject({ code: 'PLUGIN_FAILED' });
      expect(err.pluginMessage).toContain(`${inner} is a mount point inside it`);
      expect(await readFile(join(inner, 'precious'), 'utf8')).toBe('keep me');
    });

    it('says what was left when a file inside cannot be removed, and a second delete finishes the job', async (ctx) => {
      dir = await tempDir();
      const volumesDir = join(dir, 'volumes');
      const id = newVolumeId();
      const { path } = await create(plugin.executable, createRequest(volumesDir, id));
      const stuck = join(path, 'immutable');
      await writeFile(stuck, 'x');
      const immutable = await run('/usr/bin/chattr', ['+i', stuck]).then(
        () => true,
        () => false,
      );
      if (!immutable) ctx.skip(); // the temp dir's filesystem has no immutable flag (tmpfs)
      try {
        const err = await remove(plugin.executable, deleteRequest(volumesDir, id)).catch((e) => e);
        expect(err).toMatchObject({ code: 'PLUGIN_FAILED' });
        expect(err.pluginMessage).toContain(`could not remove all of ${path}`);
      } finally {
        await run('/usr/bin/chattr', ['-i', stuck]);
      }
      await remove(plugin.executable, deleteRequest(volumesDir, id));
      expect(await listTree(volumesDir)).toEqual([]);
    });

    it('deletes the volume once the filesystem inside it is unmounted', async () => {
      dir = await tempDir();
      const volumesDir = join(dir, 'volumes');
      const id = newVolumeId();
      const { path } = await create(plugin.executable, createRequest(volumesDir, id));
      await tmpfs(join(path, 'data'), '1m');
      await run('/usr/bin/umount', [mounts.pop()!]);
      await remove(plugin.executable, deleteRequest(volumesDir, id));
      expect(await listTree(volumesDir)).toEqual([]);
    });
  });
});
