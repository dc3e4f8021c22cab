import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { copyFile, lstat, mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { runAsDhv } from './support/run-as-dhv.js';
import { Agent, loadAgentConfig } from '@dhv/harness';
import {
  skipRootTests,
  skipUnless,
  tool,
  builtPlugin,
  runDhv,
  type DhvRun,
  loopDeviceNamesBackedBelow,
  tempDir,
  mountPointsAtOrBelow,
  removeTempDir,
} from './support/kit.js';
import { snapshotTree } from './support/tree-snapshot.js';

/**
 * `dhv agent gc`: volumes on disk under the volumes dir that client state does not know
 * (a create cut after its plugin ran and before state was written) are listed with the
 * command that removes them, and removed with --remove by the plugin that made them.
 */

const ORPHAN_ID = '0f8e7d6c-5b4a-4938-a271-605f4e3d2c1b';
const MiB = 1024 * 1024;

function parsed<T>(run: DhvRun): T {
  expect(run.exitCode, `${run.stderr}${run.stdout}`).toBe(0);
  return JSON.parse(run.stdout) as T;
}

interface GcJson {
  VolumesDir: string;
  Orphans: Array<{
    ID: string;
    Name: string;
    Kind: string;
    Paths: string[];
    PluginID: string;
    Blocker: string;
    RemoveCommand: string;
  }>;
  Removed: string[];
  Failed: Array<{ ID: string; Error: { code: string; message: string } }>;
}

/** A test's own sandbox: data dir, plugin dir, volumes dir, and `dhv` bound to them. */
async function makeSandbox() {
  const sandbox = await tempDir('gc');
  const dataDir = join(sandbox, 'data');
  const pluginDir = join(sandbox, 'plugins');
  const volumesDir = join(dataDir, 'host_volumes');
  await mkdir(pluginDir, { recursive: true });
  const flags = ['--data-dir', dataDir, '--plugin-dir', pluginDir];
  const dhv = (...args: string[]) => runDhv([...args, ...flags]);

  /** What a create cut short leaves besides its volume: the claim of its name, written before its plugin ran. */
  async function claimName(name: string, id: string): Promise<void> {
    const dir = join(dataDir, 'client', 'host_volume_names');
    await mkdir(dir, { recursive: true });
    await writeFile(
      join(dir, `${createHash('sha256').update(name).digest('hex')}.json`),
      JSON.stringify({ Name: name, ID: id }),
    );
  }

  async function createWithBuiltinMkdir(name: string): Promise<string> {
    const spec = join(sandbox, `${name}.hcl`);
    await writeFile(spec, `type = "host"\nname = "${name}"\nplugin_id = "mkdir"\n`);
    return parsed<{ Volume: { ID: string } }>(await dhv('volume', 'create', spec, '--json')).Volume.ID;
  }

  return { sandbox, dataDir, pluginDir, volumesDir, flags, dhv, claimName, createWithBuiltinMkdir };
}
type Sandbox = Awaited<ReturnType<typeof makeSandbox>>;

/** `it` with a sandbox of its own, removed after it: the tests share nothing, so they run side by side. */
const it = test.extend<{ box: Sandbox }>({
  // vitest reads the fixtures a test needs from this first parameter's destructuring.
  // eslint-disable-next-line no-empty-pattern
  box: async ({}, use) => {
    const box = await makeSandbox();
    try {
      await use(box);
    } finally {
      await removeTempDir(box.sandbox);
    }
  },
});

describe.concurrent('dhv agent gc', () => {
  it('says there is nothing to do when everything on disk is in client state', async ({
    box: { dhv, createWithBuiltinMkdir },
  }) => {
    await createWithBuiltinMkdir('kept');

    const run = await dhv('agent', 'gc');

    expect(run.exitCode, `${run.stderr}${run.stdout}`).toBe(0);
    expect(run.stdout).toMatch(/No orphaned volumes in .*: everything on disk is in client state/);
  });

  it('lists a directory that client state does not know, with the command that removes it, and --remove removes only it', async ({
    box: { dataDir, pluginDir, volumesDir, dhv, claimName, createWithBuiltinMkdir },
  }) => {
    const kept = await createWithBuiltinMkdir('kept');
    await mkdir(join(volumesDir, ORPHAN_ID));
    await writeFile(join(volumesDir, ORPHAN_ID, 'file'), 'left by a create cut short\n');
    await claimName('cut-short', ORPHAN_ID);
    await mkdir(join(volumesDir, 'not-a-volume')); // not named by a volume ID: not gc's business

    const listing = await dhv('agent', 'gc');
    expect(listing.exitCode, listing.stderr).toBe(0);
    expect(listing.stdout).toContain('1 orphaned volume(s)');
    expect(listing.stdout).toContain(join(volumesDir, ORPHAN_ID));
    expect(listing.stdout).toContain(
      `agent gc --remove --data-dir ${dataDir} --plugin-dir ${pluginDir} --id ${ORPHAN_ID}`,
    );
    const json = parsed<GcJson>(await dhv('agent', 'gc', '--json'));
    expect(json.Orphans).toMatchObject([
      {
        ID: ORPHAN_ID,
        Kind: 'directory',
        PluginID: 'mkdir',
        Blocker: '',
        RemoveCommand: expect.stringContaining('agent gc --remove'),
      },
    ]);
    expect(existsSync(join(volumesDir, ORPHAN_ID)), 'listing removes nothing').toBe(true);

    const removed = parsed<GcJson>(await dhv('agent', 'gc', '--remove', '--json'));

    expect(removed.Removed).toEqual([ORPHAN_ID]);
    expect(existsSync(join(volumesDir, ORPHAN_ID))).toBe(false);
    expect(existsSync(join(volumesDir, kept))).toBe(true);
    expect(existsSync(join(volumesDir, 'not-a-volume'))).toBe(true);
    expect(parsed<GcJson>(await dhv('agent', 'gc', '--json')).Orphans).toEqual([]);
  });

  it('has --help that says what an orphan is and how to remove one', async () => {
    const run = await runDhv(['agent', 'gc', '--help']);
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toMatch(/unknown to client state/);
    expect(run.stdout).toContain('--remove');
    expect(run.stdout).toContain('--json');
  });

  it("is a library call too: the Agent's orphans() from @dhv/harness", async ({
    box: { dataDir, pluginDir, volumesDir, claimName },
  }) => {
    await mkdir(join(volumesDir, ORPHAN_ID), { recursive: true });
    await claimName('cut-short', ORPHAN_ID);
    const gc = (await Agent.open(await loadAgentConfig({ dataDir, pluginDir }))).orphans();

    expect(await gc.find()).toMatchObject([{ id: ORPHAN_ID, kind: 'directory', plugin: 'mkdir', blocker: undefined }]);
    expect(await gc.collect({ remove: true })).toMatchObject({ removed: [ORPHAN_ID], failed: [] });
    expect(await gc.find()).toEqual([]);
  });

  it('removes a planted symlink itself, never its target', async ({ box: { sandbox, volumesDir, dhv, claimName } }) => {
    const victim = join(sandbox, 'victim');
    await mkdir(victim);
    await writeFile(join(victim, 'secret'), 'keep\n');
    await mkdir(volumesDir, { recursive: true });
    await symlink(victim, join(volumesDir, ORPHAN_ID));
    await claimName('linked', ORPHAN_ID);
    const before = await snapshotTree(victim);

    const removed = parsed<GcJson>(await dhv('agent', 'gc', '--remove', '--json'));

    expect(removed.Orphans).toMatchObject([{ ID: ORPHAN_ID, Kind: 'symlink' }]);
    await expect(lstat(join(volumesDir, ORPHAN_ID))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await snapshotTree(victim)).toEqual(before);
  });

  it('does not count a registered volume that lives at <volumes dir>/<uuid> under another ID', async ({
    box: { sandbox, volumesDir, dhv },
  }) => {
    const path = join(volumesDir, ORPHAN_ID);
    await mkdir(path, { recursive: true });
    const spec = join(sandbox, 'registered.hcl');
    await writeFile(spec, `type = "host"\nname = "registered"\nhost_path = "${path}"\n`);
    parsed(await dhv('volume', 'register', spec, '--json'));

    expect(parsed<GcJson>(await dhv('agent', 'gc', '--json')).Orphans).toEqual([]);
  });

  it('removes what dhv-mkdir made for a volume that was never recorded', async ({
    box: { pluginDir, volumesDir, dhv, claimName },
  }) => {
    await copyFile(builtPlugin('dhv-mkdir'), join(pluginDir, 'dhv-mkdir'));
    await mkdir(volumesDir, { recursive: true });
    // The agent claimed the name, the plugin ran, then the agent died before writing state.
    await claimName('cut', ORPHAN_ID);
    await runAsDhv(join(pluginDir, 'dhv-mkdir'), 'create', {
      volumesDir,
      volumeName: 'cut',
      volumeId: ORPHAN_ID,
      nodeId: 'node',
    });

    const json = parsed<GcJson>(await dhv('agent', 'gc', '--remove', '--json'));

    expect(json.Removed).toEqual([ORPHAN_ID]);
    expect(existsSync(join(volumesDir, ORPHAN_ID))).toBe(false);
  });

  it('lists the half-built volume a dhv-mkdir create killed before its rename left, and removes it with dhv-mkdir', async ({
    box: { pluginDir, volumesDir, dhv, claimName },
  }) => {
    await copyFile(builtPlugin('dhv-mkdir'), join(pluginDir, 'dhv-mkdir'));
    const staging = join(volumesDir, `.dhv-mkdir-${ORPHAN_ID}.new`);
    await mkdir(join(staging, 'half'), { recursive: true });
    await claimName('cut', ORPHAN_ID);

    const listed = parsed<GcJson>(await dhv('agent', 'gc', '--json'));
    expect(listed.Orphans).toEqual([
      expect.objectContaining({ ID: ORPHAN_ID, Name: 'cut', Paths: [staging], PluginID: 'dhv-mkdir', Blocker: '' }),
    ]);

    const json = parsed<GcJson>(await dhv('agent', 'gc', '--remove', '--json'));
    expect(json.Removed).toEqual([ORPHAN_ID]);
    expect(existsSync(staging)).toBe(false);
    expect(parsed<GcJson>(await dhv('agent', 'gc', '--json')).Orphans).toEqual([]);
  });
});

/** Holds an fcntl (POSIX) lock on `path` until killed, as a program that knows nothing of flock would. */
async function holdFcntlLock(path: string): Promise<ChildProcess> {
  const child = spawn(
    'python3',
    [
      '-c',
      'import fcntl,sys,time\nf=open(sys.argv[1],"r+")\nfcntl.lockf(f,fcntl.LOCK_EX)\nprint("locked",flush=True)\ntime.sleep(600)',
      path,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`python3 exited with ${code}`)));
    child.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('locked') && resolve());
  });
  return child;
}

describe.skipIf(skipUnless('gc and lock files it did not make', tool('python3', 'python3')))(
  'dhv agent gc and lock files',
  () => {
    it('removes only the free lock files dhv made (marked), never an unmarked *.lock nor one another program holds with fcntl', async ({
      box: { volumesDir, dhv },
    }) => {
      const hidden = join(volumesDir, '.dhv-loopback');
      await mkdir(hidden, { recursive: true });
      // What a dhv holder killed with SIGKILL leaves: its note, which starts with the lock's mark.
      const leftByDhv = join(volumesDir, `.dhv-mkdir-${ORPHAN_ID}.lock`);
      await writeFile(leftByDhv, 'dhv-lock 4242       \n');
      const foreignFree = join(volumesDir, '.backup.lock');
      await writeFile(foreignFree, '');
      const foreignHidden = join(hidden, `${ORPHAN_ID}.lock`);
      await writeFile(foreignHidden, 'another program\n');
      const heldByFcntl = join(volumesDir, '.dhv-mkdir-1a2b3c4d-5b4a-4938-a271-605f4e3d2c1b.lock');
      await writeFile(heldByFcntl, 'dhv-lock 4243       \n');
      const holder = await holdFcntlLock(heldByFcntl);
      try {
        expect(parsed<GcJson & { FreeLocks: string[] }>(await dhv('agent', 'gc', '--json')).FreeLocks).toEqual([
          leftByDhv,
        ]);
        const run = await dhv('agent', 'gc', '--remove', '--json');
        expect(run.exitCode, `${run.stderr}${run.stdout}`).toBe(0);
        expect(existsSync(leftByDhv)).toBe(false);
        for (const kept of [foreignFree, foreignHidden, heldByFcntl]) expect(existsSync(kept), kept).toBe(true);
      } finally {
        holder.kill('SIGKILL');
      }
    });
  },
);

describe.skipIf(skipRootTests('dhv agent gc on mounted orphans'))(
  'dhv agent gc on mounted orphans',
  { concurrent: true },
  () => {
    it('leaves an unrecorded dhv-loopback volume alone while it is mounted, naming the umount and losetup to run; then removes it with its plugin', async ({
      box: { pluginDir, volumesDir, dhv, claimName },
    }) => {
      await copyFile(builtPlugin('dhv-loopback'), join(pluginDir, 'dhv-loopback'));
      await mkdir(volumesDir, { recursive: true });
      await claimName('cut', ORPHAN_ID);
      await runAsDhv(join(pluginDir, 'dhv-loopback'), 'create', {
        volumesDir,
        volumeName: 'cut',
        volumeId: ORPHAN_ID,
        nodeId: 'node',
        capacityMinBytes: 16 * MiB,
      });
      expect(mountPointsAtOrBelow(volumesDir)).toHaveLength(1);
      const [device] = loopDeviceNamesBackedBelow(volumesDir);

      const refused = await dhv('agent', 'gc', '--remove', '--json');
      expect(refused.exitCode).toBe(1);
      const listed = JSON.parse(refused.stdout) as GcJson;
      expect(listed.Orphans).toMatchObject([{ ID: ORPHAN_ID, Kind: 'mount point', PluginID: 'dhv-loopback' }]);
      expect(listed.Orphans[0]!.Blocker).toContain(`umount ${join(volumesDir, ORPHAN_ID)} && losetup -d ${device}`);
      expect(listed.Orphans[0]!.Paths).toEqual(
        expect.arrayContaining([join(volumesDir, ORPHAN_ID), expect.stringMatching(/\.dhv-loopback\/.*\.img$/)]),
      );
      expect(mountPointsAtOrBelow(volumesDir)).toHaveLength(1);

      execFileSync('/usr/bin/umount', [join(volumesDir, ORPHAN_ID)]);
      execFileSync('/usr/sbin/losetup', ['-d', device!]);
      // losetup -d only marks a device still held open (udev probes it after the umount) for
      // detaching; the kernel detaches it once the last holder closes it.
      for (let i = 0; i < 400 && loopDeviceNamesBackedBelow(volumesDir).includes(device!); i++)
        await new Promise((r) => setTimeout(r, 25));
      const removed = parsed<GcJson>(await dhv('agent', 'gc', '--remove', '--json'));

      expect(removed.Removed).toEqual([ORPHAN_ID]);
      expect(loopDeviceNamesBackedBelow(volumesDir)).toEqual([]);
      expect(existsSync(join(volumesDir, ORPHAN_ID))).toBe(false);
    });

    it('leaves alone a directory named by a volume ID that no create claimed: it is not known to be a volume', async ({
      box: { volumesDir, dhv },
    }) => {
      await mkdir(join(volumesDir, ORPHAN_ID), { recursive: true });
      await writeFile(join(volumesDir, ORPHAN_ID, 'data'), "someone else's\n");

      const run = await dhv('agent', 'gc', '--remove', '--json');

      const json = JSON.parse(run.stdout) as GcJson;
      expect(json.Orphans).toMatchObject([
        { ID: ORPHAN_ID, Blocker: expect.stringMatching(/no create of this agent claimed/) },
      ]);
      expect(json.Removed).toEqual([]);
      expect(existsSync(join(volumesDir, ORPHAN_ID, 'data'))).toBe(true);
    });

    it('refuses to remove something mounted there that no plugin left a trace of, says why, and exits 1', async ({
      box: { volumesDir, dhv },
    }) => {
      const path = join(volumesDir, ORPHAN_ID);
      await mkdir(path, { recursive: true });
      execFileSync('/usr/bin/mount', ['-t', 'tmpfs', '-o', 'size=1m', 'dhv-gc-foreign', path]);
      await writeFile(join(path, 'data'), 'not ours\n');

      const run = await dhv('agent', 'gc', '--remove', '--json');

      expect(run.exitCode).toBe(1);
      const json = JSON.parse(run.stdout) as GcJson;
      expect(json.Orphans[0]!.Blocker).toMatch(/no create of this agent/);
      expect(json.Failed).toMatchObject([{ ID: ORPHAN_ID, Error: { code: 'ORPHAN_NOT_REMOVED' } }]);
      expect(existsSync(join(path, 'data'))).toBe(true);
    });
  },
);
