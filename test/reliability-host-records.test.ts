import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { attachedLoopDevices, mountsAt } from '@dhv/sdk/host';
import { skipRootTests } from './support/kit.js';
import { bashPlugin, testWithAgent, volumeHcl, type TempAgent } from './support/dhv-agent.js';

/**
 * What dhv may touch and what it may call ready: only what
 * client state and the plugins' own records name is unmounted, detached or removed,
 * and a volume whose directory is gone or whose delete was cut short is not ready.
 */

const FOREIGN_ID = '9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d';
/** Each test has an agent of its own, removed after it, so they run side by side. */
const it = testWithAgent();

/** Undoes a foreign mount or loop device the test made, when the test ends, unless it is already gone. */
function undoAfter(onTestFinished: (fn: () => void) => void, undo: () => void): void {
  onTestFinished(() => {
    try {
      undo();
    } catch {
      // already undone
    }
  });
}

interface VolumeJson {
  ID: string;
  Name: string;
  State: string;
  StateError?: string;
}

async function create(a: TempAgent, name: string, plugin = 'mkdir'): Promise<{ ID: string; HostPath: string }> {
  return (await a.json('volume', 'create', await a.file(`${name}.hcl`, volumeHcl({ name, plugin_id: plugin })))).Volume;
}

describe.skipIf(skipRootTests('agent restart --reboot touching only volumes'))(
  'agent restart --reboot touches only volumes (root)',
  { concurrent: true },
  () => {
    it('leaves a foreign tmpfs under the volumes dir, one inside a volume its plugin did not make, and a loop device backed by a foreign image there', async ({
      agent: a,
      onTestFinished,
    }) => {
      const volume = await create(a, 'mine');
      const inside = join(volume.HostPath, 'bind');
      await mkdir(inside);
      execFileSync('/usr/bin/mount', ['-t', 'tmpfs', '-o', 'size=1m', 'dhv-test-inside', inside]);
      undoAfter(onTestFinished, () => execFileSync('/usr/bin/umount', ['-l', inside]));
      const foreign = join(a.volumesDir, 'foreign');
      await mkdir(foreign);
      execFileSync('/usr/bin/mount', ['-t', 'tmpfs', '-o', 'size=1m', 'dhv-test-foreign', foreign]);
      undoAfter(onTestFinished, () => execFileSync('/usr/bin/umount', ['-l', foreign]));
      const image = join(a.volumesDir, 'foreign.img');
      execFileSync('/usr/bin/truncate', ['-s', '4M', image]);
      const device = execFileSync('/usr/sbin/losetup', ['--find', '--show', image], { encoding: 'utf8' }).trim();
      undoAfter(onTestFinished, () => execFileSync('/usr/sbin/losetup', ['--detach', device]));

      const restart = await a.json('agent', 'restart', '--reboot');

      // Mounted inside the volume by someone else, not by its plugin: left, and said (issue 35).
      expect(restart.Reboot.Unmounted).toEqual([]);
      expect(restart.Reboot.LeftMounted).toEqual([
        expect.stringMatching(new RegExp(`^${inside}: tmpfs dhv-test-inside`)),
      ]);
      expect(restart.Reboot.Detached).toEqual([]);
      expect(await mountsAt(foreign)).toHaveLength(1);
      expect((await attachedLoopDevices()).some((l) => l.device === device)).toBe(true);
    });
  },
);

describe.concurrent('a volumes dir that is not there', () => {
  it('is not made by agent restart, and an external plugin volume is not restored into it nor called ready', async ({
    agent: a,
  }) => {
    await a.plugin('ext', bashPlugin());
    const volume = await create(a, 'ext-volume', 'ext');
    await rm(a.volumesDir, { recursive: true });

    const restart = await a.dhv('agent', 'restart', '--json');

    expect(restart.stdout + restart.stderr).toContain('VOLUMES_DIR_MISSING');
    expect(existsSync(a.volumesDir)).toBe(false);
    const [status] = await a.json<VolumeJson[]>('volume', 'status');
    expect(status).toMatchObject({ ID: volume.ID, State: 'unavailable' });
    expect(status!.StateError).toMatch(/does not exist/);
  });
});

describe.concurrent('a volumes dir that is a symbolic link', () => {
  it('gc says where it leads, and never removes a foreign directory in its target', async ({ agent: a }) => {
    const target = join(a.dir, 'elsewhere');
    await mkdir(join(target, FOREIGN_ID), { recursive: true });
    await writeFile(join(target, FOREIGN_ID, 'data'), 'not a volume\n');
    await rm(a.volumesDir, { recursive: true, force: true });
    await symlink(target, a.volumesDir);

    const run = await a.dhv('agent', 'gc', '--remove', '--json');
    const report = JSON.parse(run.stdout) as {
      VolumesDirTarget: string;
      Orphans: Array<{ ID: string; Blocker: string }>;
      Removed: string[];
    };

    expect(report.VolumesDirTarget).toBe(target);
    expect(report.Removed).toEqual([]);
    expect(report.Orphans).toMatchObject([
      { ID: FOREIGN_ID, Blocker: expect.stringMatching(/not known to be a volume/) },
    ]);
    expect(existsSync(join(target, FOREIGN_ID, 'data'))).toBe(true);
    expect((await a.dhv('agent', 'gc')).stdout).toContain(`is a symbolic link to ${target}`);
  });
});

describe.concurrent('ready only for what is there', () => {
  it('a volume whose directory is gone is unavailable in volume status, while the node reports it as a real one would', async ({
    agent: a,
  }) => {
    const volume = await create(a, 'gone');
    await rm(volume.HostPath, { recursive: true });

    const [status] = await a.json<VolumeJson[]>('volume', 'status');
    expect(status).toMatchObject({ ID: volume.ID, State: 'unavailable' });
    // A real node keeps reporting it until restart (vector delete-state-write-fails); the state says the truth.
    expect((await a.json('node', 'status')).HostVolumes.gone).toMatchObject({ ID: volume.ID });
  });

  it('a delete killed with kill -9 while its plugin runs leaves the volume unavailable, not ready', async ({
    agent: a,
  }) => {
    const marker = join(a.dir, 'delete-started');
    await a.plugin(
      'slowdel',
      bashPlugin().replace(
        'delete) /bin/rm -rf "$dir";',
        `delete) : > ${JSON.stringify(marker)}; /bin/sleep 5; /bin/rm -rf "$dir";`,
      ),
    );
    const volume = await create(a, 'cut', 'slowdel');
    const del = a.start('volume', 'delete', volume.ID);
    const end = Date.now() + 60_000;
    while (!existsSync(marker) && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
    del.kill('SIGKILL');
    await new Promise((r) => del.once('exit', r));

    const [status] = await a.json<VolumeJson[]>('volume', 'status');
    expect(status).toMatchObject({ ID: volume.ID, State: 'unavailable' });
    expect((await a.json('node', 'status')).HostVolumes.cut).toMatchObject({ ID: volume.ID });
  });
});

describe.concurrent('state files that would hang a reader, and files nothing else collects', () => {
  it('a FIFO as a client state file never hangs a reader: status answers at once for the other volumes, and names it', async ({
    agent: a,
  }) => {
    await create(a, 'one');
    const fifo = join(a.dataDir, 'client', 'host_volumes', `${FOREIGN_ID}.json`);
    execFileSync('/usr/bin/mkfifo', [fifo]);

    // A damaged record is its own volume's alone (issue 34): the others are listed, the file is named.
    const volumes = await a.dhv('volume', 'status');
    expect(volumes.exitCode).toBe(0);
    expect(volumes.stdout).toMatch(/ one +default/);
    const node = await a.dhv('node', 'status');
    expect(node.exitCode).toBe(0);
    expect(node.stdout).toMatch(/^one +false/m);
    expect(node.stderr).toContain(`${fifo} is a FIFO, not a regular file`);
  });

  it("agent restart sweeps free name locks and dead writers' temp files; gc lists and removes a plugin's free lock file", async ({
    agent: a,
  }) => {
    await create(a, 'one');
    const locks = join(a.dataDir, 'client', 'locks');
    await mkdir(locks, { recursive: true });
    // What a killed holder leaves: its note, which starts with the lock's mark.
    await writeFile(join(locks, 'left-by-a-killed-create.lock'), 'dhv-lock 999999999  \n');
    const claims = join(a.dataDir, 'client', 'host_volume_names');
    await writeFile(join(claims, '.tmp-999999999-abcd-x.json'), '{');
    const pluginLock = join(a.volumesDir, '.dhv-loopback', `${FOREIGN_ID}.lock`);
    await mkdir(join(a.volumesDir, '.dhv-loopback'), { recursive: true });
    await writeFile(pluginLock, 'dhv-lock 999999999  \n');

    expect((await a.dhv('agent', 'restart')).exitCode).toBe(0);
    expect(await readdir(locks)).toEqual([]);
    expect((await readdir(claims)).filter((n) => n.startsWith('.tmp-'))).toEqual([]);

    expect((await a.json('agent', 'gc')).FreeLocks).toEqual([pluginLock]);
    await a.dhv('agent', 'gc', '--remove');
    expect(existsSync(pluginLock)).toBe(false);
  });
});
