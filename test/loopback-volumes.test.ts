import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdir, readFile, stat, statfs, symlink, truncate, writeFile } from 'node:fs/promises';
import { once } from 'node:events';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import { type RequestInput } from '@dhv/sdk/client';
import { runAsDhv } from './support/run-as-dhv.js';
import {
  skipRootTests,
  skipUnless,
  tool,
  loopDevicesBackedBelowSync,
  mountsAtOrBelowSync,
  removeTempDir,
  builtPlugin,
} from './support/kit.js';
import { inPrivateMountNamespace } from './support/private-mount-namespace.js';
import { NOBODY, stageForOtherUser } from './support/other-user.js';
import { expectPluginError } from './support/plugin-error.js';
import { GIB, inventory, MIB, NOTHING, tempVolumesDir } from './support/loopback-volumes.js';

/** The dhv-loopback plugin, built, run exactly as a Nomad agent runs it, as root on real loop devices. */
describe.skipIf(skipRootTests('dhv-loopback on real loop devices'))('dhv-loopback on real loop devices', () => {
  const noXfs = skipUnless('dhv-loopback on xfs', tool('mkfs.xfs', 'xfsprogs'), tool('xfs_growfs', 'xfsprogs'));
  const skipFs = (fs: 'ext4' | 'xfs') => fs === 'xfs' && noXfs;
  let volumesDir: string;
  let children: ChildProcess[];
  const plugin = () => builtPlugin('dhv-loopback');

  beforeEach(async () => {
    children = [];
    volumesDir = await tempVolumesDir();
  });

  afterEach(async () => {
    for (const child of children) child.kill('SIGKILL');
    await Promise.all(
      children.map((c) =>
        c.exitCode === null && c.signalCode === null ? new Promise((r) => c.once('exit', r)) : undefined,
      ),
    );
    await removeTempDir(volumesDir);
  });

  const createRequest = (id: string, over: Partial<RequestInput<'create'>> = {}): RequestInput<'create'> => ({
    volumesDir,
    volumeId: id,
    volumeName: `vol-${id.slice(0, 8)}`,
    nodeId: 'node-1',
    capacityMinBytes: GIB,
    ...over,
  });
  const create = (id: string, over: Partial<RequestInput<'create'>> = {}) =>
    runAsDhv(plugin(), 'create', createRequest(id, over));
  const remove = (id: string) =>
    runAsDhv(plugin(), 'delete', {
      volumesDir,
      volumeId: id,
      volumeName: `vol-${id.slice(0, 8)}`,
      nodeId: 'node-1',
      createdPath: join(volumesDir, id),
    });
  const imageOf = (id: string) => join(volumesDir, '.dhv-loopback', `${id}.img`);
  const failure = (promise: Promise<unknown>) => expectPluginError(promise);

  /**
   * A new mount namespace as a runtime's set-up makes it: a copy of every mount, `path`'s
   * among them, until it drops the ones it does not keep, 0.4 s later.
   */
  async function namespaceDroppingCopyOf(path: string): Promise<void> {
    const setUp = spawn(
      ...inPrivateMountNamespace(
        'echo ready; /bin/sleep 0.4; /usr/bin/umount -l "$0"; exec /bin/sleep 600',
        [path],
        [path],
      ),
      { stdio: ['ignore', 'pipe', 'ignore'] },
    );
    children.push(setUp);
    await once(setUp.stdout!, 'data');
    expect(await readFile(`/proc/${setUp.pid}/mountinfo`, 'utf8')).toContain(` ${path} `);
  }
  const filesystemBytes = async (path: string) => {
    const s = await statfs(path, { bigint: true });
    return s.blocks * s.bsize;
  };
  const sha256 = async (path: string) =>
    createHash('sha256')
      .update(await readFile(path))
      .digest('hex');

  it('creates a 1 GiB ext4 volume: a sparse image, mounted at <volumes dir>/<id>, reporting its size', async () => {
    const id = randomUUID();
    const result = await create(id);
    expect(result.path).toBe(join(volumesDir, id));
    expect(result.bytes).toBe(GIB);

    const [mount] = mountsAtOrBelowSync(volumesDir);
    expect(mount).toMatchObject({ mountPoint: result.path, fsType: 'ext4' });
    expect(loopDevicesBackedBelowSync(volumesDir).map((l) => l.backingFile)).toEqual([imageOf(id)]);
    const size = await filesystemBytes(result.path);
    expect(size).toBeGreaterThan((GIB * 9n) / 10n);
    expect(size).toBeLessThanOrEqual(GIB);
    const image = await stat(imageOf(id));
    expect(BigInt(image.size)).toBe(GIB);
    expect(image.blocks * 512).toBeLessThan(64 * 1024 * 1024); // sparse: never written with zeros
    expect((await stat(result.path)).mode & 0o7777).toBe(0o700);
  });

  for (const fs of ['ext4', 'xfs'] as const) {
    it.skipIf(skipFs(fs))(
      `keeps every file of an ${fs} volume when the host reboots: unmounted and detached behind its back, create mounts it again`,
      async () => {
        const id = randomUUID();
        const { path } = await create(id, { parameters: { fs } });
        await writeFile(join(path, 'data.bin'), randomBytes(4 * 1024 * 1024));
        const before = await sha256(join(path, 'data.bin'));

        // What a reboot does: the mount and the loop device are gone, the image stays.
        await runTool('/usr/bin/umount', [path]);
        for (const loop of loopDevicesBackedBelowSync(volumesDir))
          await runTool('/usr/sbin/losetup', ['--detach', loop.device]);
        expect(mountsAtOrBelowSync(volumesDir)).toEqual([]);
        expect(loopDevicesBackedBelowSync(volumesDir)).toEqual([]);

        const again = await create(id, { parameters: { fs } });
        expect(again).toMatchObject({ path, bytes: GIB });
        expect(await sha256(join(path, 'data.bin'))).toBe(before);
        expect(mountsAtOrBelowSync(volumesDir).map((m) => [m.mountPoint, m.fsType])).toEqual([[path, fs]]);
        expect(loopDevicesBackedBelowSync(volumesDir)).toHaveLength(1);
      },
    );
  }

  it('finds its mounts when the volumes dir is reached through a symlink (restore, then delete)', async () => {
    const real = join(volumesDir, 'real');
    const linked = join(volumesDir, 'linked');
    await mkdir(real);
    await symlink(real, linked);
    const id = randomUUID();
    const request = { volumesDir: linked, capacityMinBytes: 64n * MIB };
    const { path } = await create(id, request);
    expect(path).toBe(join(linked, id));
    expect(mountsAtOrBelowSync(volumesDir).map((m) => m.mountPoint)).toEqual([join(real, id)]);

    await create(id, request); // already mounted: no second mount on top
    expect(mountsAtOrBelowSync(volumesDir)).toHaveLength(1);
    await runAsDhv(plugin(), 'delete', {
      volumesDir: linked,
      volumeId: id,
      volumeName: 'v',
      nodeId: 'node-1',
      createdPath: path,
    });
    expect(mountsAtOrBelowSync(volumesDir)).toEqual([]);
    expect(loopDevicesBackedBelowSync(volumesDir)).toEqual([]);
    expect((await inventory(real)).files).toEqual([]);
  });

  it('reports a volume that is already mounted unchanged, with no second loop device or mount', async () => {
    const id = randomUUID();
    const first = await create(id);
    await writeFile(join(first.path, 'keep'), 'kept');
    const second = await create(id);
    expect(second).toMatchObject({ path: first.path, bytes: first.bytes });
    expect(await readFile(join(first.path, 'keep'), 'utf8')).toBe('kept');
    expect(mountsAtOrBelowSync(volumesDir)).toHaveLength(1);
    expect(loopDevicesBackedBelowSync(volumesDir)).toHaveLength(1);
  });

  for (const fs of ['ext4', 'xfs'] as const) {
    it.skipIf(skipFs(fs))(
      `expands a mounted ${fs} volume from 1 GiB to 2 GiB online, keeping the data byte for byte`,
      async () => {
        const id = randomUUID();
        const parameters = { fs };
        const { path } = await create(id, { parameters, capacityMaxBytes: 4n * GIB });
        await writeFile(join(path, 'data.bin'), randomBytes(16 * 1024 * 1024));
        const before = await sha256(join(path, 'data.bin'));
        const sizeBefore = await filesystemBytes(path);

        const grown = await create(id, { parameters, capacityMinBytes: 2n * GIB, capacityMaxBytes: 4n * GIB });
        expect(grown.bytes).toBe(2n * GIB);
        expect(BigInt((await stat(imageOf(id))).size)).toBe(2n * GIB);
        expect(await filesystemBytes(path)).toBeGreaterThan(sizeBefore + (GIB * 9n) / 10n);
        expect(await sha256(join(path, 'data.bin'))).toBe(before);
        expect(mountsAtOrBelowSync(volumesDir).map((m) => m.fsType)).toEqual([fs]);

        // A smaller capacity_min never shrinks anything.
        const again = await create(id, { parameters, capacityMinBytes: GIB });
        expect(again.bytes).toBe(2n * GIB);
        expect(await sha256(join(path, 'data.bin'))).toBe(before);
      },
    );
  }

  for (const fs of ['ext4', 'xfs'] as const) {
    it.skipIf(skipFs(fs))(`finishes growing an ${fs} volume whose create was killed after the image grew`, async () => {
      const id = randomUUID();
      const parameters = { fs };
      const { path } = await create(id, { capacityMinBytes: 320n * MIB, parameters });
      await writeFile(join(path, 'keep'), 'kept');
      const sizeBefore = await filesystemBytes(path);
      // What a create killed by the deadline mid-growth leaves: a larger image and the marker.
      await truncate(imageOf(id), Number(640n * MIB));
      await writeFile(`${imageOf(id)}.growing`, `${320n * MIB} ${640n * MIB}\n`);

      const restored = await create(id, { capacityMinBytes: 320n * MIB, parameters });
      expect(restored.bytes).toBe(640n * MIB);
      expect(await filesystemBytes(path)).toBeGreaterThan(sizeBefore + 250n * MIB);
      expect(await readFile(join(path, 'keep'), 'utf8')).toBe('kept');
      await expect(stat(`${imageOf(id)}.growing`)).rejects.toThrow(/ENOENT/);
    });
  }

  it('grows an ext4 volume offline when it cannot grow mounted (read-only), and mounts it again as it was', async () => {
    const id = randomUUID();
    const parameters = { mount_options: 'ro,nodev' };
    const { path } = await create(id, { capacityMinBytes: 256n * MIB, parameters });
    const sizeBefore = await filesystemBytes(path);
    const grown = await create(id, { capacityMinBytes: 512n * MIB, parameters });
    expect(grown.bytes).toBe(512n * MIB);
    expect(await filesystemBytes(path)).toBeGreaterThan(sizeBefore + 200n * MIB);
    const [mount] = mountsAtOrBelowSync(volumesDir);
    expect(mount!.options).toEqual(expect.arrayContaining(['ro', 'nodev']));
  });

  it('refuses to grow a volume it cannot grow mounted while it is in use, saying so, and keeps the old size', async () => {
    const id = randomUUID();
    const parameters = { mount_options: 'ro' };
    const { path } = await create(id, { capacityMinBytes: 256n * MIB, parameters });
    const holder = spawn('/bin/sleep', ['600'], { cwd: path, stdio: 'ignore' });
    children.push(holder);
    await new Promise((r) => holder.once('spawn', r));

    const err = await failure(create(id, { capacityMinBytes: 512n * MIB, parameters }));
    expect(err.pluginMessage).toMatch(/cannot grow/);
    expect(err.pluginMessage).toMatch(/in use/);
    expect(BigInt((await stat(imageOf(id))).size)).toBe(256n * MIB);
    expect(mountsAtOrBelowSync(volumesDir).map((m) => m.mountPoint)).toEqual([path]);
  });

  it('grows an ext4 volume offline once the copy a new mount namespace holds is dropped, as a task start drops it', async () => {
    const id = randomUUID();
    const parameters = { mount_options: 'ro' };
    const { path } = await create(id, { capacityMinBytes: 256n * MIB, parameters });
    const sizeBefore = await filesystemBytes(path);
    await namespaceDroppingCopyOf(path);

    const grown = await create(id, { capacityMinBytes: 512n * MIB, parameters });
    expect(grown.bytes).toBe(512n * MIB);
    expect(await filesystemBytes(path)).toBeGreaterThan(sizeBefore + 200n * MIB);
  });

  it('refuses to grow offline a volume another mount namespace keeps mounted, naming its process, and keeps it as it was', async () => {
    const id = randomUUID();
    const parameters = { mount_options: 'ro' };
    const { path } = await create(id, { capacityMinBytes: 256n * MIB, parameters });
    const container = spawn(...inPrivateMountNamespace('echo ready && exec /bin/sleep 600', [], [path]), {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    children.push(container);
    await once(container.stdout!, 'data');

    const err = await failure(create(id, { capacityMinBytes: 512n * MIB, parameters }));
    expect(err.pluginMessage).toContain(
      `it is still mounted in the mount namespace of process ${container.pid} (at ${path}), so it cannot grow offline`,
    );
    expect(BigInt((await stat(imageOf(id))).size)).toBe(256n * MIB);
    expect(mountsAtOrBelowSync(volumesDir).map((m) => m.mountPoint)).toEqual([path]);
    expect(mountsAtOrBelowSync(volumesDir)[0]!.options).toContain('ro');
  });

  it('deletes: unmounts, detaches, removes the image and the mount point; a second delete succeeds too', async () => {
    const id = randomUUID();
    await create(id);
    await remove(id);
    expect(await inventory(volumesDir)).toEqual(NOTHING);
    await remove(id);
    expect(await inventory(volumesDir)).toEqual(NOTHING);
  });

  it('refuses to delete a volume in use, saying so, and removes nothing', async () => {
    const id = randomUUID();
    const { path } = await create(id);
    const holder = spawn('/bin/sleep', ['600'], { cwd: path, stdio: 'ignore' });
    children.push(holder);
    await new Promise((r) => holder.once('spawn', r));

    const err = await failure(remove(id));
    expect(err.pluginMessage).toMatch(/in use/);
    expect(mountsAtOrBelowSync(volumesDir).map((m) => m.mountPoint)).toEqual([path]);
    expect(loopDevicesBackedBelowSync(volumesDir)).toHaveLength(1);
    expect((await stat(imageOf(id))).isFile()).toBe(true);
  });

  it("refuses to delete a volume that is also mounted elsewhere (a workload's bind mount), and removes nothing", async () => {
    const id = randomUUID();
    const { path } = await create(id, { capacityMinBytes: 64n * MIB });
    const workload = join(volumesDir, 'alloc-data');
    await mkdir(workload);
    await runTool('/usr/bin/mount', ['--bind', path, workload]);

    const err = await failure(remove(id));
    expect(err.pluginMessage).toMatch(/in use: its filesystem is also mounted at .*alloc-data/);
    expect(
      mountsAtOrBelowSync(volumesDir)
        .map((m) => m.mountPoint)
        .sort(),
    ).toEqual([path, workload].sort());
    expect(loopDevicesBackedBelowSync(volumesDir)).toHaveLength(1);
    expect((await stat(imageOf(id))).isFile()).toBe(true);
  });

  it('refuses to delete a volume a container still holds in its own mount namespace, and leaves it mounted', async () => {
    const id = randomUUID();
    const { path } = await create(id, { capacityMinBytes: 64n * MIB });
    const container = spawn(...inPrivateMountNamespace('echo ready && exec /bin/sleep 600', [], [path]), {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    children.push(container);
    await once(container.stdout!, 'data');

    const err = await failure(remove(id));
    expect(err.pluginMessage).toMatch(
      new RegExp(
        `in use: its filesystem is also mounted at ${path} \\(in the mount namespace of process ${container.pid}\\)`,
      ),
    );
    expect(mountsAtOrBelowSync(volumesDir).map((m) => m.mountPoint)).toEqual([path]);
    expect(loopDevicesBackedBelowSync(volumesDir)).toHaveLength(1);
    expect((await stat(imageOf(id))).isFile()).toBe(true);
  });

  it('deletes a volume whose copy another mount namespace drops a moment later, as a container set-up does', async () => {
    const id = randomUUID();
    const { path } = await create(id, { capacityMinBytes: 32n * MIB });
    await namespaceDroppingCopyOf(path);

    await remove(id);
    expect(await inventory(volumesDir)).toEqual(NOTHING);
  });

  it('can delete a volume while another test holds a private mount namespace that does not keep it', async () => {
    // Two copies of the suite side by side: the other copy's namespace must not pin our volume.
    const [mine, theirs] = [randomUUID(), randomUUID()];
    const kept = (await create(mine, { capacityMinBytes: 32n * MIB })).path;
    const dropped = (await create(theirs, { capacityMinBytes: 32n * MIB })).path;
    const namespace = spawn(...inPrivateMountNamespace('echo ready && exec /bin/sleep 600', [], [kept]), {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    children.push(namespace);
    await once(namespace.stdout!, 'data');
    const seen = await readFile(`/proc/${namespace.pid}/mountinfo`, 'utf8');
    expect(seen).toContain(` ${kept} `);
    expect(seen).not.toContain(` ${dropped} `);

    await remove(theirs);
    expect((await failure(remove(mine))).pluginMessage).toMatch(/in the mount namespace of process/);
    expect(mountsAtOrBelowSync(volumesDir).map((m) => m.mountPoint)).toEqual([kept]);
  });

  it('creates 8 volumes concurrently, each on its own loop device, and deletes them concurrently', async () => {
    const ids = Array.from({ length: 8 }, () => randomUUID());
    const results = await Promise.all(ids.map((id) => create(id, { capacityMinBytes: 256n * MIB })));
    expect(results.map((r) => r.path).sort()).toEqual(ids.map((id) => join(volumesDir, id)).sort());
    const loops = loopDevicesBackedBelowSync(volumesDir);
    expect(loops).toHaveLength(8);
    expect(new Set(loops.map((l) => l.device)).size).toBe(8);
    expect(mountsAtOrBelowSync(volumesDir)).toHaveLength(8);

    await Promise.all(ids.map((id) => remove(id)));
    expect(await inventory(volumesDir)).toEqual(NOTHING);
  });

  it('serialises concurrent creates of the same volume: one image, one loop device, one mount', async () => {
    const id = randomUUID();
    const results = await Promise.all(Array.from({ length: 4 }, () => create(id)));
    for (const r of results) expect(r).toMatchObject({ path: join(volumesDir, id), bytes: GIB });
    expect(loopDevicesBackedBelowSync(volumesDir)).toHaveLength(1);
    expect(mountsAtOrBelowSync(volumesDir)).toHaveLength(1);
  });

  // A leak of any one cycle shows after it; the soak (test/soak) repeats the same volume 50 times.
  it('leaves no loop device and no mount behind after 5 create/delete cycles of the same volume', async () => {
    const id = randomUUID();
    for (let cycle = 0; cycle < 5; cycle++) {
      await create(id, { capacityMinBytes: 32n * MIB });
      await remove(id);
    }
    expect(await inventory(volumesDir)).toEqual(NOTHING);
  });

  it('sets mode, uid and gid on the filesystem root and mounts with the allowed mount_options', async () => {
    const id = randomUUID();
    const { path } = await create(id, {
      capacityMinBytes: 64n * MIB,
      parameters: { mode: '0750', uid: '1234', gid: '5678', mount_options: 'noexec,nosuid,nodev,noatime,ro' },
    });
    const root = await stat(path);
    expect(root.mode & 0o7777).toBe(0o750);
    expect([root.uid, root.gid]).toEqual([1234, 5678]);
    const [mount] = mountsAtOrBelowSync(volumesDir);
    expect(mount!.options).toEqual(expect.arrayContaining(['ro', 'noexec', 'nosuid', 'nodev', 'noatime']));
  });

  it('reserves every block up front with preallocate = "true"', async () => {
    const id = randomUUID();
    await create(id, { capacityMinBytes: 64n * MIB, parameters: { preallocate: 'true' } });
    const image = await stat(imageOf(id));
    expect(image.blocks * 512).toBeGreaterThanOrEqual(64 * 1024 * 1024);
  });

  it('sizes by capacity_max when only it is set, rounded to whole MiB within the range', async () => {
    const id = randomUUID();
    expect((await create(id, { capacityMinBytes: 0n, capacityMaxBytes: 100n * MIB })).bytes).toBe(100n * MIB);
    const other = randomUUID();
    const odd = await create(other, { capacityMinBytes: 50_000_000n, capacityMaxBytes: 60_000_000n });
    expect(odd.bytes).toBe(48n * MIB);
  });

  it('refuses a volume with no capacity, an unknown parameter, a bad fs or mount option, naming each', async () => {
    const id = randomUUID();
    expect((await failure(create(id, { capacityMinBytes: 0n }))).pluginMessage).toMatch(/capacity is required/);
    const bad = await failure(
      create(id, { parameters: { colour: 'blue', fs: 'btrfs', mount_options: 'noexec,suid' } }),
    );
    expect(bad.pluginMessage).toMatch(/unknown parameter "colour"/);
    expect(bad.pluginMessage).toMatch(/fs must be one of ext4, xfs, got "btrfs"/);
    expect(bad.pluginMessage).toMatch(/"suid" is not allowed/);
    expect(await inventory(volumesDir)).toEqual(NOTHING);
  });

  it('answers fingerprint without root, and says create and delete need root when run as another user', async () => {
    // A copy nobody can reach: the checkout may sit in a private folder.
    const staged = await stageForOtherUser([plugin()]);
    onTestFinished(() => staged.remove());
    const asNobody = staged.path('dhv-loopback');
    const nobody = NOBODY;
    const fp = await runAs(asNobody, ['fingerprint'], { DHV_OPERATION: 'fingerprint' }, nobody);
    expect(fp.code).toBe(0);
    expect(JSON.parse(fp.stdout)).toEqual({ version: '0.1.0' });

    await mkdir(join(volumesDir, 'nobody'), { mode: 0o777 });
    const { buildEnvironment } = await import('@dhv/sdk/client');
    const env = buildEnvironment(
      'create',
      createRequest(randomUUID(), { volumesDir: join(volumesDir, 'nobody') }),
      plugin(),
    );
    const denied = await runAs(asNobody, ['create'], env, nobody);
    expect(denied.code).not.toBe(0);
    expect(JSON.parse(denied.stdout).error).toMatch(/must run as root/);

    const id = randomUUID();
    const { path } = await create(id, { capacityMinBytes: 64n * MIB });
    const deleteEnv = buildEnvironment(
      'delete',
      { volumesDir, volumeId: id, volumeName: 'v', nodeId: 'node-1', createdPath: path },
      plugin(),
    );
    const notDeleted = await runAs(asNobody, ['delete'], deleteEnv, nobody);
    expect(notDeleted.code).not.toBe(0);
    expect(JSON.parse(notDeleted.stdout).error).toMatch(/must run as root/);
    expect(mountsAtOrBelowSync(volumesDir).map((m) => m.mountPoint)).toEqual([path]);
  });
});

function runTool(file: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { stdio: 'ignore' });
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`${file} ${args.join(' ')} exited ${code}`)),
    );
  });
}

function runAs(
  file: string,
  args: string[],
  env: Record<string, string>,
  ids: { uid: number; gid: number },
): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { env, ...ids, cwd: '/', stdio: ['ignore', 'pipe', 'ignore'] });
    let stdout = '';
    child.stdout!.on('data', (chunk) => (stdout += chunk));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout }));
  });
}
