import { chmod, lstat, mkdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  create,
  createRequest,
  deleteRequest,
  listTree,
  newVolumeId,
  remove,
  snapshot,
  useBuiltPlugin,
} from './support/mkdir-plugin.js';
import { tempDir, removeTempDir, root, skipUnless } from './support/kit.js';

const plugin = useBuiltPlugin();

let dir: string;
let volumesDir: string;
afterEach(async () => {
  await removeTempDir(dir);
});
async function setup() {
  dir = await tempDir();
  volumesDir = join(dir, 'volumes');
  await mkdir(volumesDir);
}

async function victimDir(): Promise<string> {
  const victim = join(dir, 'victim');
  await mkdir(victim);
  await chmod(victim, 0o755);
  await writeFile(join(victim, 'precious'), 'do not touch');
  return victim;
}

describe('dhv-mkdir delete', () => {
  it('removes the volume and everything in it, and nothing else', async () => {
    await setup();
    const id = newVolumeId();
    const other = newVolumeId();
    const { path } = await create(plugin.executable, createRequest(volumesDir, id));
    await create(plugin.executable, createRequest(volumesDir, other));
    await mkdir(join(path, 'a', 'b'), { recursive: true });
    await writeFile(join(path, 'a', 'b', 'file'), 'data');
    await remove(plugin.executable, deleteRequest(volumesDir, id, { createdPath: path }));
    expect(await listTree(volumesDir)).toEqual([other]);
  });

  it.skipIf(skipUnless('deleting a read-only tree', root()))(
    'removes a read-only directory inside the volume, as root may',
    async () => {
      await setup();
      const id = newVolumeId();
      const { path } = await create(plugin.executable, createRequest(volumesDir, id));
      await mkdir(join(path, 'a', 'b'), { recursive: true });
      await writeFile(join(path, 'a', 'b', 'file'), 'data');
      await chmod(join(path, 'a'), 0o500);
      await remove(plugin.executable, deleteRequest(volumesDir, id, { createdPath: path }));
      expect(await listTree(volumesDir)).toEqual([]);
    },
  );

  it('removes links inside the volume without following them', async () => {
    await setup();
    const victim = await victimDir();
    const before = await snapshot(victim);
    const id = newVolumeId();
    const { path } = await create(plugin.executable, createRequest(volumesDir, id));
    await symlink(victim, join(path, 'link-to-victim'));
    await symlink(join(victim, 'precious'), join(path, 'link-to-file'));
    await remove(plugin.executable, deleteRequest(volumesDir, id));
    await expect(lstat(path)).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await snapshot(victim)).toEqual(before);
  });

  it('succeeds when the volume is already gone, twice', async () => {
    await setup();
    const id = newVolumeId();
    await remove(plugin.executable, deleteRequest(volumesDir, id));
    await remove(plugin.executable, deleteRequest(volumesDir, id, { createdPath: join(volumesDir, id) }));
    expect(await listTree(volumesDir)).toEqual([]);
  });

  it('succeeds when the volumes dir does not exist, and does not create it', async () => {
    dir = await tempDir();
    const missing = join(dir, 'volumes');
    await remove(plugin.executable, deleteRequest(missing, newVolumeId()));
    expect(await listTree(dir)).toEqual([]);
  });

  it('succeeds when the volumes dir is a file, leaving the file alone', async () => {
    dir = await tempDir();
    const file = join(dir, 'volumes');
    await writeFile(file, 'not a directory');
    await remove(plugin.executable, deleteRequest(file, newVolumeId()));
    expect(await readFile(file, 'utf8')).toBe('not a directory');
  });

  it('derives the path the way create does when DHV_CREATED_PATH is empty', async () => {
    await setup();
    const id = newVolumeId();
    const { path } = await create(plugin.executable, createRequest(volumesDir, id));
    await remove(plugin.executable, deleteRequest(volumesDir, id, { createdPath: '' }));
    await expect(lstat(path)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('accepts DHV_CREATED_PATH written with a trailing slash', async () => {
    await setup();
    const id = newVolumeId();
    const { path } = await create(plugin.executable, createRequest(volumesDir, id));
    await remove(plugin.executable, deleteRequest(volumesDir, id, { createdPath: `${path}/` }));
    await expect(lstat(path)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it.each([
    // The volumes dir itself is the agent's cleanup delete, which removes only this volume (test/check-cleanup-delete.test.ts).
    ['another directory', (d: string) => join(d, 'victim')],
    ['another volume', (d: string) => join(d, 'volumes', '00000000-0000-4000-8000-000000000000')],
    ['a path that climbs out', (d: string) => `${d}/volumes/../victim`],
  ])('refuses when DHV_CREATED_PATH is %s, and deletes nothing', async (_what, createdPathOf) => {
    await setup();
    await victimDir();
    await mkdir(join(volumesDir, '00000000-0000-4000-8000-000000000000'));
    const id = newVolumeId();
    await create(plugin.executable, createRequest(volumesDir, id));
    const before = await listTree(dir);
    const err = await remove(
      plugin.executable,
      deleteRequest(volumesDir, id, { createdPath: createdPathOf(dir) }),
    ).catch((e) => e);
    expect(err).toMatchObject({ code: 'PLUGIN_FAILED' });
    expect(err.pluginMessage).toContain('refusing to delete');
    expect(await listTree(dir)).toEqual(before);
  });

  it('removes a symbolic link at the volume path itself, never its target', async () => {
    await setup();
    const victim = await victimDir();
    const before = await snapshot(victim);
    const id = newVolumeId();
    await symlink(victim, join(volumesDir, id));
    await remove(plugin.executable, deleteRequest(volumesDir, id));
    await expect(lstat(join(volumesDir, id))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await snapshot(victim)).toEqual(before);
    expect(await readFile(join(victim, 'precious'), 'utf8')).toBe('do not touch');
  });

  it('refuses a volume ID that is not a UUID, touching nothing', async () => {
    await setup();
    const victim = await victimDir();
    const before = await listTree(dir);
    const err = await remove(plugin.executable, deleteRequest(volumesDir, '../victim')).catch((e) => e);
    expect(err).toMatchObject({ code: 'PLUGIN_FAILED' });
    expect(await listTree(dir)).toEqual(before);
    expect((await stat(victim)).isDirectory()).toBe(true);
  });

  it('leaves no lock files behind in the volumes dir', async () => {
    await setup();
    const id = newVolumeId();
    await create(plugin.executable, createRequest(volumesDir, id));
    expect(await listTree(volumesDir)).toEqual([id]);
    await remove(plugin.executable, deleteRequest(volumesDir, id));
    expect(await listTree(volumesDir)).toEqual([]);
  });
});
