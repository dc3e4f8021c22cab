import { execFileSync, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildEnvironment, decodeErrorOutput, spawnPlugin, type RequestInput } from '@dhv/sdk/client';
import { AGENT_TIMEOUT_MS, FAIL_AT_VARIABLE, UndoStack } from '@dhv/sdk/plugin';
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
import { expectPluginError } from './support/plugin-error.js';
import { GIB, inventory, MIB, NOTHING, tempVolumesDir } from './support/loopback-volumes.js';

/**
 * A create that fails part way leaves nothing behind: no image, no loop device, no
 * mount, no directory. Failures are real where the host can make them fail (mkfs
 * refusing a size, a full disk, a path in the way); elsewhere the shipped plugin is made to
 * fail before a chosen `ctx.step` by the SDK's fault seam (DHVSDK_FAIL_AT=step:<name>).
 */
describe.skipIf(skipRootTests('dhv-loopback undoing a failed create'))('dhv-loopback undoes a failed create', () => {
  const noXfs = skipUnless('dhv-loopback failures on xfs', tool('mkfs.xfs', 'xfsprogs'));
  let volumesDir: string;

  beforeEach(async () => {
    volumesDir = await tempVolumesDir();
  });
  afterEach(async () => {
    await removeTempDir(volumesDir);
  });

  const request = (id: string, over: Partial<RequestInput<'create'>> = {}): RequestInput<'create'> => ({
    volumesDir,
    volumeId: id,
    volumeName: `vol-${id.slice(0, 8)}`,
    nodeId: 'node-1',
    capacityMinBytes: 256n * MIB,
    ...over,
  });
  const failure = (promise: Promise<unknown>) => expectPluginError(promise);
  /** The shipped plugin's create, made to fail before `step` by the SDK runtime's fault seam; its error message. */
  const createFailingAt = async (step: string, asked: RequestInput<'create'>) => {
    const plugin = builtPlugin('dhv-loopback');
    const env = { ...buildEnvironment('create', asked, plugin), [FAIL_AT_VARIABLE]: `step:${step}` };
    const run = await spawnPlugin(plugin, ['create'], env, {
      timeoutMs: AGENT_TIMEOUT_MS.create,
      maxOutputBytes: 1 << 20,
      cwd: '/',
    });
    expect(run.exitCode).toBe(1);
    return decodeErrorOutput(run.stdout, 'create');
  };

  // Each fails before its step runs, with every step before it made.
  const cases: { step: string; fs: 'ext4' | 'xfs'; parameters?: Record<string, string> }[] = [
    { step: 'image', fs: 'ext4' },
    { step: 'preallocate', fs: 'ext4', parameters: { preallocate: 'true' } },
    { step: 'filesystem', fs: 'ext4' },
    { step: 'filesystem', fs: 'ext4', parameters: { preallocate: 'true' } },
    { step: 'loop-device', fs: 'ext4' },
    { step: 'mount-point', fs: 'ext4' },
    { step: 'mount', fs: 'ext4' },
    { step: 'mount', fs: 'xfs' },
    { step: 'root-directory', fs: 'ext4', parameters: { mount_options: 'ro', uid: '1000' } },
  ];
  for (const { step, fs, parameters } of cases) {
    it.skipIf(fs === 'xfs' && noXfs)(
      `leaves nothing behind when a new ${fs} volume${parameters ? ` (${JSON.stringify(parameters)})` : ''} fails at step "${step}"`,
      async () => {
        const id = randomUUID();
        const capacityMinBytes = fs === 'xfs' ? 320n * MIB : 64n * MIB;
        const message = await createFailingAt(
          step,
          request(id, { capacityMinBytes, parameters: { fs, ...parameters } }),
        );
        expect(message).toMatch(new RegExp(`^injected failure at step \\d+ \\(${step}\\)$`));
        expect(await inventory(volumesDir)).toEqual(NOTHING);

        // Nothing half-made gets in the way of the next create.
        const ok = await runAsDhv(
          builtPlugin('dhv-loopback'),
          'create',
          request(id, { capacityMinBytes, parameters: { fs } }),
        );
        expect(ok.path).toBe(join(volumesDir, id));
      },
    );
  }

  it('undoes everything and says it stopped when the deadline fires part way', async () => {
    const { createVolume } = await import('../packages/plugin-loopback/src/create-volume.js');
    const deadline = new AbortController();
    const id = randomUUID();
    // What the runtime does with ctx.step and ctx.undo: the steps, undone newest first once create threw.
    const undo = new UndoStack();
    const err = await createVolume(
      {
        ...request(id),
        volumeName: 'v',
        pluginDir: '/',
        namespace: 'default',
        nodePool: 'default',
        capacityMinBytes: 64n * MIB,
        capacityMaxBytes: 0n,
        parameters: null,
      },
      {
        operation: 'create',
        signal: deadline.signal,
        log: () => {},
        undo: (what, action) => undo.push(what, action),
        step: async (what, run, reverse) => {
          // The deadline fires once the loop device is attached.
          if (what === 'mount-point') deadline.abort(new Error("the agent's 60s deadline is near"));
          const result = await run();
          if (reverse) undo.push(what, () => reverse(result));
          return result;
        },
      },
    ).then(
      () => undefined,
      (e: unknown) => e as Error & { code?: string },
    );
    expect(await undo.unwind(() => {})).toEqual([]);
    expect(err?.code).toBe('ESTOPPED');
    expect(err?.message).toMatch(/create stopped \(the agent's 60s deadline is near\) and undid what it had made/);
    expect(await inventory(volumesDir)).toEqual(NOTHING);
  });

  it('puts the image back when growing a volume fails after the image grew (at grow-filesystem), and keeps the volume mounted with its data', async () => {
    const id = randomUUID();
    const { path } = await runAsDhv(builtPlugin('dhv-loopback'), 'create', request(id));
    await writeFile(join(path, 'keep'), 'kept');
    // At grow-filesystem, the image has grown and the filesystem has not.
    const message = await createFailingAt('grow-filesystem', request(id, { capacityMinBytes: 512n * MIB }));
    expect(message).toMatch(/^injected failure at step \d+ \(grow-filesystem\)$/);
    expect((await stat(join(volumesDir, '.dhv-loopback', `${id}.img`))).size).toBe(Number(256n * MIB));
    expect(mountsAtOrBelowSync(volumesDir).map((m) => m.mountPoint)).toEqual([path]);
    expect(await readFile(join(path, 'keep'), 'utf8')).toBe('kept');
  });

  it.skipIf(noXfs)('undoes the image when mkfs fails for real (xfs smaller than mkfs.xfs allows)', async () => {
    const err = await failure(
      runAsDhv(
        builtPlugin('dhv-loopback'),
        'create',
        request(randomUUID(), { capacityMinBytes: 64n * MIB, parameters: { fs: 'xfs' } }),
      ),
    );
    expect(err.pluginMessage).toMatch(/mkfs\.xfs/);
    expect(await inventory(volumesDir)).toEqual(NOTHING);
  });

  it('refuses an image larger than the free space, with both sizes in human units', async () => {
    execFileSync('/usr/bin/mount', ['-t', 'tmpfs', '-o', 'size=64m', 'dhv-loopback-test', volumesDir]);
    const err = await failure(
      runAsDhv(builtPlugin('dhv-loopback'), 'create', request(randomUUID(), { capacityMinBytes: GIB })),
    );
    expect(err.pluginMessage).toMatch(/needs 1\.0 GiB but only 6\d(\.\d)? MiB is free/);
    expect(loopDevicesBackedBelowSync(volumesDir)).toEqual([]);
    expect(mountsAtOrBelowSync(volumesDir).map((m) => m.mountPoint)).toEqual([volumesDir]); // only the test's tmpfs
    expect((await inventory(volumesDir)).files).toEqual([]);
  });

  it('refuses to create on a mount point that is a file or a symlink; delete removes the link itself, never its target', async () => {
    const file = randomUUID();
    await writeFile(join(volumesDir, file), 'not a directory');
    expect((await failure(runAsDhv(builtPlugin('dhv-loopback'), 'create', request(file)))).pluginMessage).toMatch(
      /refusing to use .* as the mount point/,
    );

    const link = randomUUID();
    const target = await tempVolumesDir('loopback-target');
    try {
      await writeFile(join(target, 'precious'), 'untouched');
      await symlink(target, join(volumesDir, link));
      expect((await failure(runAsDhv(builtPlugin('dhv-loopback'), 'create', request(link)))).pluginMessage).toMatch(
        /symlink/,
      );
      expect(mountsAtOrBelowSync(target)).toEqual([]);
      expect((await inventory(volumesDir)).files).toEqual([file, link].sort());
      expect(loopDevicesBackedBelowSync(volumesDir)).toEqual([]);

      await runAsDhv(builtPlugin('dhv-loopback'), 'delete', { ...request(link), createdPath: '' });
      await runAsDhv(builtPlugin('dhv-loopback'), 'delete', { ...request(file), createdPath: '' });
      expect(await inventory(volumesDir)).toEqual(NOTHING);
      expect(await readFile(join(target, 'precious'), 'utf8')).toBe('untouched');
    } finally {
      await rm(target, { recursive: true, force: true });
    }
  });

  it('refuses a volumes dir whose parent is missing (a mistyped host_volumes_dir) and makes no directory tree', async () => {
    const err = await failure(
      runAsDhv(
        builtPlugin('dhv-loopback'),
        'create',
        request(randomUUID(), { volumesDir: join(volumesDir, 'typo', 'volumes') }),
      ),
    );
    expect(err.pluginMessage).toMatch(/does not exist, and neither does its parent/);
    expect((await inventory(volumesDir)).files).toEqual([]);
  });

  it('refuses an image path blocked by a directory, and never reformats or removes it', async () => {
    const id = randomUUID();
    await mkdir(join(volumesDir, '.dhv-loopback', `${id}.img`), { recursive: true });
    expect((await failure(runAsDhv(builtPlugin('dhv-loopback'), 'create', request(id)))).pluginMessage).toMatch(
      /not a regular file/,
    );
    expect((await stat(join(volumesDir, '.dhv-loopback', `${id}.img`))).isDirectory()).toBe(true);
    expect(loopDevicesBackedBelowSync(volumesDir)).toEqual([]);
    expect(mountsAtOrBelowSync(volumesDir)).toEqual([]);
  });

  it('refuses to mount over something else already mounted at the volume path', async () => {
    const id = randomUUID();
    await mkdir(join(volumesDir, id));
    execFileSync('/usr/bin/mount', ['-t', 'tmpfs', '-o', 'size=1m', 'someone-else', join(volumesDir, id)]);
    expect((await failure(runAsDhv(builtPlugin('dhv-loopback'), 'create', request(id)))).pluginMessage).toMatch(
      /already has someone-else mounted/,
    );
    expect(
      (await failure(runAsDhv(builtPlugin('dhv-loopback'), 'delete', { ...request(id), createdPath: '' })))
        .pluginMessage,
    ).toMatch(/not this volume's image/);
    expect(mountsAtOrBelowSync(volumesDir).map((m) => m.source)).toEqual(['someone-else']);
    expect(loopDevicesBackedBelowSync(volumesDir)).toEqual([]);
  });

  it.skipIf(noXfs)('names the Debian package to install when a tool is missing, and makes nothing', async () => {
    // mkfs.xfs hidden in a private mount namespace: a file with no execute bit bound over it.
    const env = buildEnvironment(
      'create',
      request(randomUUID(), { capacityMinBytes: 320n * MIB, parameters: { fs: 'xfs' } }),
      builtPlugin('dhv-loopback'),
    );
    const run = spawnSync(
      ...inPrivateMountNamespace('/usr/bin/mount --bind /dev/null /usr/sbin/mkfs.xfs && exec "$0" create', [
        builtPlugin('dhv-loopback'),
      ]),
      { env, encoding: 'utf8' },
    );
    expect(run.status).toBe(1);
    expect(JSON.parse(run.stdout).error).toMatch(
      /mkfs\.xfs was not found in .*; install it \(Debian\/Ubuntu: apt-get install xfsprogs\)/,
    );
    expect(await inventory(volumesDir)).toEqual(NOTHING);
  });

  it('says the host has no loop device support when /dev has no loop devices, and makes nothing', async () => {
    // An empty /dev in a private mount namespace, as in an unprivileged container.
    const env = buildEnvironment('create', request(randomUUID()), builtPlugin('dhv-loopback'));
    const run = spawnSync(
      ...inPrivateMountNamespace('/usr/bin/mount -t tmpfs none /dev && exec "$0" create', [
        builtPlugin('dhv-loopback'),
      ]),
      { env, encoding: 'utf8' },
    );
    expect(run.status).toBe(1);
    expect(JSON.parse(run.stdout).error).toMatch(/no loop device support .*modprobe loop/);
    expect(await inventory(volumesDir)).toEqual(NOTHING);
  });

  it('refuses an image that holds no filesystem instead of formatting it', async () => {
    const id = randomUUID();
    await mkdir(join(volumesDir, '.dhv-loopback'), { recursive: true });
    await writeFile(join(volumesDir, '.dhv-loopback', `${id}.img`), Buffer.alloc(1024 * 1024, 7));
    expect((await failure(runAsDhv(builtPlugin('dhv-loopback'), 'create', request(id)))).pluginMessage).toMatch(
      /holds no ext4 or xfs filesystem/,
    );
    expect((await readFile(join(volumesDir, '.dhv-loopback', `${id}.img`)))[0]).toBe(7);
    expect(loopDevicesBackedBelowSync(volumesDir)).toEqual([]);
  });
});
