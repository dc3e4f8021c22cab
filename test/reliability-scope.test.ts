import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, copyFile, mkdir, readdir, rm, symlink, truncate, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { attachedLoopDevicesSync, readMountTableSync } from '@dhv/sdk/host';
import { builtPlugin, skipRootTests, runDhv, type DhvRun, tempDir, removeTempDir } from './support/kit.js';
import { loopDiskAttached, mountLoopDisk, releaseLoopDisk } from './support/loop-disk.js';
import { diskRecordFoldersBelow } from './support/plugin-disk-records.js';

/**
 * Round three of the reliability recipes (issue 22): gc removes only what is provably an
 * orphan of this agent, restore never makes volumes on the wrong disk, teardown never
 * leaves its scope, and "ready" means usable.
 */

const MiB = 1024 * 1024;
const SIZE = 'capacity_min = "16MiB"\ncapacity_max = "16MiB"\n';

/** A test's own temp dir, data dir, plugin dir (both reference plugins) and volumes dir, and `dhv` bound to them. */
async function makeScope() {
  const t = await tempDir('scope');
  const dataDir = join(t, 'data');
  const pluginDir = join(t, 'plugins');
  const volumesDir = join(t, 'vols');
  await mkdir(pluginDir, { recursive: true, mode: 0o755 });
  await chmod(t, 0o755);
  for (const p of ['dhv-mkdir', 'dhv-loopback'] as const) await copyFile(builtPlugin(p), join(pluginDir, p));

  const dhv = (args: string[], env: NodeJS.ProcessEnv = {}) =>
    runDhv([...args], { cwd: t, env: { DHV_DATA_DIR: undefined, ...env } });
  const agentFlags = (data = dataDir) => ['--data-dir', data, '--plugin-dir', pluginDir, '--volumes-dir', volumesDir];

  async function create(
    name: string,
    plugin: string,
    flags = agentFlags(),
    extra = '',
  ): Promise<{ ID: string; HostPath: string }> {
    const spec = join(t, `${name}.hcl`);
    await writeFile(spec, `type = "host"\nname = "${name}"\nplugin_id = "${plugin}"\n${extra}`);
    const run = await dhv(['volume', 'create', spec, '--json', ...flags]);
    expect(run.exitCode, run.stderr).toBe(0);
    return (JSON.parse(run.stdout) as { Volume: { ID: string; HostPath: string } }).Volume;
  }

  async function states(flags = agentFlags()): Promise<Record<string, { State: string; Error?: string }>> {
    const run = await dhv(['volume', 'status', '--json', ...flags]);
    expect(run.exitCode, run.stderr).toBe(0);
    const rows = JSON.parse(run.stdout) as Array<{ ID: string; State: string; StateError?: string; Error?: string }>;
    return Object.fromEntries(rows.map((r) => [r.ID, { State: r.State, Error: r.StateError ?? r.Error ?? '' }]));
  }

  return { t, dataDir, pluginDir, volumesDir, dhv, agentFlags, create, states };
}
type Scope = Awaited<ReturnType<typeof makeScope>>;

/**
 * `it` with a scope of its own, removed after it (mounts and loop devices included): the
 * tests share nothing on the host but the mount table and the loop devices, and judge only
 * their own entries in those, so they run side by side.
 */
const it = test.extend<{ scope: Scope }>({
  // vitest reads the fixtures a test needs from this first parameter's destructuring.
  // eslint-disable-next-line no-empty-pattern
  scope: async ({}, use) => {
    const scope = await makeScope();
    try {
      await use(scope);
    } finally {
      await removeTempDir(scope.t);
    }
  },
});

const sh = (cmd: string, ...args: string[]) => execFileSync(cmd, args, { stdio: 'pipe' }).toString();
const tmpfs = async (at: string) => {
  await mkdir(at, { recursive: true });
  sh('/usr/bin/mount', '-t', 'tmpfs', '-o', 'size=1m', 'dhv-foreign', at);
  await writeFile(join(at, 'foreign'), 'not dhv’s\n');
};
const attach = async (image: string) => {
  await writeFile(image, Buffer.alloc(MiB));
  return sh('/usr/sbin/losetup', '--find', '--show', image).trim();
};
const mounted = (at: string) => readMountTableSync().some((m) => m.mountPoint === at);
const attached = (device: string) => attachedLoopDevicesSync().some((l) => l.device === device);
/** A loop device still backed by the deleted image: the device number itself may be reused by a later attach. */
/** A loop device still holds `image`, unlinked: judged by this test's own image, as another test may take the device's number. */
const heldDeleted = (image: string) => attachedLoopDevicesSync().some((l) => l.deleted && l.backingFile === image);

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const ok = (run: DhvRun) => expect(run.exitCode, `${run.stdout}\n${run.stderr}`).toBe(0);

describe.skipIf(skipRootTests('issue 22 recipes'))(
  'issue 22: gc, restore, teardown and health',
  { concurrent: true },
  () => {
    it('gc with DHV_DATA_DIR pointing elsewhere than the --config data_dir is an error naming both, and another data dir never removes a live loopback volume', async ({
      scope: { t, pluginDir, volumesDir, dhv, create, states },
    }) => {
      const config = join(t, 'agent.hcl');
      await writeFile(
        config,
        `data_dir = "${join(t, 'prod-data')}"\nclient {\n  host_volume_plugin_dir = "${pluginDir}"\n  host_volumes_dir = "${volumesDir}"\n}\n`,
      );
      const vol = await create('prod', 'dhv-loopback', ['--config', config], SIZE);
      await writeFile(join(vol.HostPath, 'data'), 'precious\n');

      const clash = await dhv(['agent', 'gc', '--remove', '--config', config], { DHV_DATA_DIR: join(t, 'other') });
      expect(clash.exitCode).not.toBe(0);
      expect(clash.stderr).toContain(`data_dir = "${join(t, 'prod-data')}"`);
      expect(clash.stderr).toContain(`DHV_DATA_DIR=${join(t, 'other')}`);

      const other = await dhv([
        'agent',
        'gc',
        '--remove',
        '--json',
        '--config',
        config,
        '--data-dir',
        join(t, 'other'),
      ]);
      const report = JSON.parse(other.stdout) as { Removed: string[]; Orphans: Array<{ ID: string; Blocker: string }> };
      expect(report.Removed).toEqual([]);
      expect(report.Orphans.find((o) => o.ID === vol.ID)?.Blocker).toMatch(/no create of this agent/);
      expect(existsSync(join(vol.HostPath, 'data'))).toBe(true);
      expect((await states(['--config', config]))[vol.ID]!.State).toBe('ready');
    });

    it("two data dirs sharing a volumes dir: A's gc removes none of B's volumes, a planted .dhv-mkdir-<id>.new included", async ({
      scope: { t, volumesDir, dhv, agentFlags, create, states },
    }) => {
      const b = join(t, 'b-data');
      const loop = await create('b-loop', 'dhv-loopback', agentFlags(b), SIZE);
      const folder = await create('b-dir', 'dhv-mkdir', agentFlags(b));
      await writeFile(join(folder.HostPath, 'data'), 'B’s\n');
      await mkdir(join(volumesDir, `.dhv-mkdir-${folder.ID}.new`));

      const run = await dhv(['agent', 'gc', '--remove', '--json', ...agentFlags(join(t, 'a-data'))]);

      expect((JSON.parse(run.stdout) as { Removed: string[] }).Removed).toEqual([]);
      expect(existsSync(join(folder.HostPath, 'data'))).toBe(true);
      expect(mounted(loop.HostPath)).toBe(true);
      expect(Object.values(await states(agentFlags(b))).map((s) => s.State)).toEqual(['ready', 'ready']);
    });

    it('restore with the volumes disk unmounted: each plugin refuses its volume naming the missing disk, nothing is created on /, the built-in mkdir says its folder moved; with the disk back all three are restored with their files', async ({
      scope: { t, volumesDir, dhv, agentFlags, create, states },
    }) => {
      await mkdir(volumesDir);
      const disk = mountLoopDisk(join(t, 'disk.img'), volumesDir, 64 * MiB);
      try {
        const dir = await create('d', 'dhv-mkdir');
        const builtin = await create('b', 'mkdir');
        const loop = await create('l', 'dhv-loopback', agentFlags(), SIZE);
        for (const v of [dir, builtin, loop]) await writeFile(join(v.HostPath, 'data'), 'on the disk\n');
        // The plugins' records of the disk live outside it, one folder per plugin for this volumes dir.
        expect(await diskRecordFoldersBelow(t)).toHaveLength(2);
        // As a reboot with the disk failing to mount would leave it: nothing of the disk attached.
        sh('/usr/bin/umount', loop.HostPath);
        for (const l of attachedLoopDevicesSync())
          if (l.backingFile.endsWith(`${loop.ID}.img`)) sh('/usr/sbin/losetup', '-d', l.device);
        sh('/usr/bin/umount', volumesDir);

        const restart = await dhv(['agent', 'restart', ...agentFlags()]);

        expect(restart.stdout).toContain('Restored 1 of 3');
        expect(restart.stdout).toMatch(new RegExp(`${builtin.ID.slice(0, 8)}.* ready at .*another filesystem`));
        // The plugins' own words, through the agent: which disk is missing and what to do.
        const at = escaped(volumesDir);
        // The filesystem the volumes dir falls back to: the one holding the test's folder (/ or the suite's tmpfs).
        const under = escaped(sh('/usr/bin/findmnt', '-n', '-o', 'TARGET', '--target', t).trim().split('\n').pop()!);
        const diskSource = `${escaped(disk.device)} \\(image ${escaped(disk.image)}\\)`;
        const refused = (id: string, plugin: string) =>
          new RegExp(
            `${id.slice(0, 8)}" \\w unavailable: error creating volume "${id}" with plugin "${plugin}": exit status 1: ` +
              `volumes dir ${at} \\(DHV_VOLUMES_DIR\\) is not on the disk its volumes were created on: ` +
              `then it was on the ext4 filesystem of ${diskSource} \\(device [0-9:]+[^)]*\\) mounted at ${at}, ` +
              `now it is on .* mounted at ${under}\\. That disk is missing .* Mount ${diskSource} at ${at} again`,
          );
        expect(restart.stdout).toMatch(refused(dir.ID, 'dhv-mkdir'));
        expect(restart.stdout).toMatch(refused(loop.ID, 'dhv-loopback'));
        expect((await readdir(volumesDir)).sort()).toEqual([builtin.ID]);
        const now = await states();
        expect([now[dir.ID]!.State, now[loop.ID]!.State]).toEqual(['unavailable', 'unavailable']);

        // The same disk mounted again: the plugins find their disk, and what was written is there.
        sh('/usr/bin/mount', disk.device, volumesDir);
        const back = await dhv(['agent', 'restart', ...agentFlags()]);
        expect(back.stdout, back.stderr).toContain('Restored 3 of 3');
        for (const v of [dir, builtin, loop]) expect(existsSync(join(v.HostPath, 'data')), v.HostPath).toBe(true);
      } finally {
        releaseLoopDisk(disk);
      }
      expect(loopDiskAttached(disk)).toBe(false);
    });

    it('a loopback volume unmounted by hand, or whose image was truncated or deleted, is unavailable with the reason; --reboot and delete detach a deleted image’s loop device', async ({
      scope: { volumesDir, dhv, agentFlags, create, states },
    }) => {
      const gone = await create('gone', 'dhv-loopback', agentFlags(), SIZE);
      const cut = await create('cut', 'dhv-loopback', agentFlags(), SIZE);
      const lost = await create('lost', 'dhv-loopback', agentFlags(), SIZE);
      const lost2 = await create('lost2', 'dhv-loopback', agentFlags(), SIZE);
      const image = (id: string) => join(volumesDir, '.dhv-loopback', `${id}.img`);
      const deviceOf = (id: string) =>
        attachedLoopDevicesSync().find((l) => l.backingFile.endsWith(`${id}.img`))!.device;
      const lostDevice = deviceOf(lost.ID);
      sh('/usr/bin/umount', gone.HostPath);
      await truncate(image(cut.ID), MiB);
      await unlink(image(lost.ID));
      await unlink(image(lost2.ID));

      const now = await states();
      expect(now[gone.ID]).toMatchObject({ State: 'unavailable', Error: expect.stringMatching(/no longer mounted/) });
      expect(now[cut.ID]).toMatchObject({ State: 'unavailable', Error: expect.stringMatching(/shorter than/) });
      expect(now[lost.ID]).toMatchObject({ State: 'unavailable', Error: expect.stringMatching(/was deleted/) });

      ok(await dhv(['volume', 'delete', lost2.ID, ...agentFlags()]));
      expect(heldDeleted(image(lost2.ID))).toBe(false);
      const reboot = await dhv(['agent', 'restart', '--reboot', ...agentFlags()]);
      expect(reboot.stdout).toContain(`detached ${lostDevice}`);
      expect(heldDeleted(image(lost.ID))).toBe(false);
    });

    it("issue 35: with one volumes dir shared by two data dirs, A's --reboot never unmounts B's dhv-loopback volume, even where A's plugin answers its path", async ({
      scope: { t, pluginDir, dhv, agentFlags, create, states },
    }) => {
      const b = join(t, 'b-data');
      const a = join(t, 'a-data');
      const loop = await create('b-loop', 'dhv-loopback', agentFlags(b), SIZE);
      await writeFile(join(loop.HostPath, 'data'), 'B’s\n');
      // A plugin that builds its paths from volume names: A's volume named as B's ID answers B's mount point.
      await writeFile(
        join(pluginDir, 'byname'),
        `#!/bin/sh\np="$DHV_VOLUMES_DIR/$DHV_VOLUME_NAME"\ncase "$DHV_OPERATION" in fingerprint) echo '{"version":"1.0.0"}';; create) mkdir -p "$p"; echo "{\\"path\\":\\"$p\\",\\"bytes\\":0}";; *) echo '{}';; esac\n`,
        { mode: 0o755 },
      );
      ok(await dhv(['agent', 'fingerprint', ...agentFlags(a)]));
      const mine = await create(loop.ID, 'byname', agentFlags(a));
      expect(mine.HostPath).toBe(loop.HostPath);

      const reboot = await dhv(['agent', 'restart', '--reboot', ...agentFlags(a)]);

      ok(reboot);
      expect(mounted(loop.HostPath), reboot.stdout).toBe(true);
      expect(reboot.stdout).toContain(`left mounted ${loop.HostPath}: ext4`);
      expect(existsSync(join(loop.HostPath, 'data'))).toBe(true);
      expect((await states(agentFlags(b)))[loop.ID]!.State).toBe('ready');
      // B's own reboot takes its volume off, and its restart mounts it again.
      const own = await dhv(['agent', 'restart', '--reboot', ...agentFlags(b)]);
      expect(own.stdout).toContain(`unmounted ${loop.HostPath}`);
      expect(existsSync(join(loop.HostPath, 'data'))).toBe(true);
    });

    it('issue 35: a volume whose filesystem was unmounted and replaced by another mount at the same path is not ready, in status and after a restore', async ({
      scope: { pluginDir, dhv, agentFlags, create, states },
    }) => {
      const loop = await create('loop', 'dhv-loopback', agentFlags(), SIZE);
      // A plugin that mounts a tmpfs for each volume and, at restore, trusts whatever is mounted there.
      await writeFile(
        join(pluginDir, 'mounter'),
        `#!/bin/sh\np="$DHV_VOLUMES_DIR/$DHV_VOLUME_ID"\ncase "$DHV_OPERATION" in fingerprint) echo '{"version":"1.0.0"}';; create) mkdir -p "$p"; /usr/bin/mountpoint -q "$p" || /usr/bin/mount -t tmpfs -o size=1m dhv-mounter "$p" || exit 1; echo "{\\"path\\":\\"$p\\",\\"bytes\\":0}";; delete) /usr/bin/mountpoint -q "$p" && /usr/bin/umount "$p"; rmdir "$p" 2>/dev/null; echo '{}';; *) echo '{}';; esac\n`,
        { mode: 0o755 },
      );
      ok(await dhv(['agent', 'fingerprint', ...agentFlags()]));
      const trusting = await create('trusting', 'mounter');
      for (const v of [loop, trusting]) {
        sh('/usr/bin/umount', v.HostPath);
        sh('/usr/bin/mount', '-t', 'tmpfs', '-o', 'size=1m', 'dhv-impostor', v.HostPath);
      }

      const now = await states();
      for (const v of [loop, trusting])
        expect(now[v.ID], v.HostPath).toMatchObject({
          State: 'unavailable',
          Error: expect.stringMatching(/holds tmpfs dhv-impostor .*not the volume's filesystem/),
        });

      const restart = await dhv(['agent', 'restart', ...agentFlags()]);
      expect(restart.stdout).toMatch(new RegExp(`${trusting.ID.slice(0, 8)}.*holds tmpfs dhv-impostor`));
      const after = await states();
      expect([after[loop.ID]!.State, after[trusting.ID]!.State]).toEqual(['unavailable', 'unavailable']);
    });

    it('no teardown leaves its scope: foreign mounts, loop devices and folders beside and under the volumes, data and scratch dirs survive gc, --reboot, delete and dhv check', async ({
      scope: { t, dataDir, pluginDir, volumesDir, dhv, agentFlags, create },
    }) => {
      const victim = join(t, 'victim');
      const foreignMounts = [
        join(t, 'beside'),
        join(volumesDir, 'under'),
        join(volumesDir, '0f8e7d6c-5b4a-4938-a271-605f4e3d2c1b'),
        join(dataDir, 'under'),
        join(victim, 'mnt'),
        join(t, 'scratch', 'beside-run'),
      ];
      for (const m of foreignMounts) await tmpfs(m);
      await mkdir(join(volumesDir, '.dhv-loopback'), { recursive: true });
      const foreignLoops = [
        await attach(join(t, 'beside.img')),
        await attach(join(volumesDir, '.dhv-loopback', '1a2b3c4d-5b4a-4938-a271-605f4e3d2c1b.img')),
        await attach(join(t, 'scratch', 'beside.img')),
      ];
      await writeFile(join(victim, 'keep'), 'keep\n');

      // A dhv-mkdir volume swapped for a link to a folder with a tmpfs under it.
      const swapped = await create('swapped', 'dhv-mkdir');
      await rm(swapped.HostPath, { recursive: true });
      await symlink(victim, swapped.HostPath);
      // A plugin whose create answers a path outside the volumes dir.
      await writeFile(
        join(pluginDir, 'outside'),
        `#!/bin/sh\ncase "$DHV_OPERATION" in fingerprint) echo '{"version":"1.0.0"}';; create) echo '{"path":"${victim}","bytes":0}';; *) echo '{}';; esac\n`,
        { mode: 0o755 },
      );
      ok(await dhv(['agent', 'fingerprint', ...agentFlags()]));
      const outside = await create('outside', 'outside');
      await create('loop', 'dhv-loopback', agentFlags(), SIZE);

      const gc = await dhv(['agent', 'gc', '--remove', ...agentFlags()]);
      expect(gc.stdout + gc.stderr).not.toContain('✓ removed');
      const reboot = await dhv(['agent', 'restart', '--reboot', ...agentFlags()]);
      expect(reboot.stdout).toContain(`left alone ${swapped.HostPath}`);
      expect(reboot.stdout).toContain(`left alone ${victim}`);
      ok(await dhv(['volume', 'delete', swapped.ID, ...agentFlags()]));
      await dhv(['volume', 'delete', outside.ID, ...agentFlags()]);

      // Under dhv check, a plugin swaps its sandbox (the parent of DHV_VOLUMES_DIR) for a link to the victim.
      const swapper = join(t, 'swapper');
      await writeFile(
        swapper,
        `#!/bin/sh\ncase "$DHV_OPERATION" in\n fingerprint) echo '{"version":"1.0.0"}';;\n create) d="$(dirname "$DHV_VOLUMES_DIR")"; if [ ! -L "$d" ]; then mv "$d" "$d.moved"; ln -s ${victim} "$d"; fi; echo "{\\"path\\":\\"$DHV_VOLUMES_DIR/$DHV_VOLUME_ID\\",\\"bytes\\":0}";;\n *) echo '{}';;\nesac\n`,
        { mode: 0o755 },
      );
      const check = await dhv(['check', swapper, '--only', 'create.path', '--volumes-dir', join(t, 'scratch')]);
      expect(check.stdout + check.stderr).toBeTruthy();
      const answersOutside = await dhv([
        'check',
        join(pluginDir, 'outside'),
        '--only',
        'create.path',
        '--volumes-dir',
        join(t, 'scratch'),
      ]);
      // As one line: the report wraps its reasons at the terminal's width, and a long TMPDIR moves the break.
      expect(answersOutside.stdout.replace(/\s+/g, ' ')).toContain(
        `create answered the path ${victim}, which is outside the volumes dir`,
      );

      for (const m of foreignMounts) expect(mounted(m), `${m} is still mounted`).toBe(true);
      for (const d of foreignLoops) expect(attached(d), `${d} is still attached`).toBe(true);
      expect(existsSync(join(victim, 'keep'))).toBe(true);
      expect(existsSync(join(victim, 'mnt', 'foreign'))).toBe(true);
    });
  },
);

describe.concurrent('issue 22: the plugin dir’s trust', () => {
  it('fingerprint, plugin run and check warn about a plugin dir and a plugin others can write, naming the chmod', async ({
    scope: { pluginDir, dhv, agentFlags },
  }) => {
    const plugin = join(pluginDir, 'open');
    await writeFile(plugin, `#!/bin/sh\necho '{"version":"1.0.0"}'\n`);
    await chmod(plugin, 0o777);
    await chmod(pluginDir, 0o777);
    const fingerprint = await dhv(['agent', 'fingerprint', ...agentFlags()]);
    expect(fingerprint.stderr).toContain(`the plugin dir ${pluginDir} (mode 0777) can be written by group`);
    expect(fingerprint.stderr).toContain(`chmod go-w ${pluginDir}`);
    expect(fingerprint.stderr).toContain(`chmod go-w ${plugin}`);
    const run = await dhv(['plugin', 'run', 'open', 'fingerprint', ...agentFlags()]);
    ok(run);
    expect(run.stderr).toContain(`chmod go-w ${plugin}`);
    const check = await dhv(['check', plugin, '--only', 'discovery.fingerprint-succeeds']);
    expect(check.stderr).toContain(`chmod go-w ${plugin}`);
    await chmod(pluginDir, 0o755);
    await chmod(plugin, 0o755);
    const quiet = await dhv(['agent', 'fingerprint', ...agentFlags()]);
    expect(quiet.stderr).not.toContain('can be written by');
  });
});
