import { randomUUID } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { mkdir, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  expectVolumesDisk,
  forgetVolumesDisk,
  keepVolumesDisk,
  pluginStateDir,
  STATE_DIR_VARIABLE,
  volumesDiskFolder,
  volumesDiskFoldersBelow,
  type VolumesDisk,
} from './volumes-disk.js';
import { removeTempDir, tempDir } from '../../../../test/support/kit.js';

// A plugin name of this test's own, so its records never meet a real plugin's.
const plugin = `dhv-volumes-disk-test-${process.pid}`;
let dir: string;
let volumesDir: string;

beforeEach(async () => {
  dir = await realpath(await tempDir('volumes-disk'));
  volumesDir = join(dir, 'vols');
  await mkdir(volumesDir);
});

afterEach(async () => {
  await rm(pluginStateDir(plugin), { recursive: true, force: true });
  await removeTempDir(dir);
});

const noLog = () => {};

async function created(id = randomUUID()): Promise<{ id: string; file: string; record: VolumesDisk }> {
  await keepVolumesDisk(await expectVolumesDisk(plugin, volumesDir, id), noLog);
  const file = join(volumesDiskFolder(plugin, volumesDir), `${id}.json`);
  return { id, file, record: JSON.parse(await readFile(file, 'utf8')) as VolumesDisk };
}

const rewrite = (file: string, record: VolumesDisk) => writeFile(file, JSON.stringify(record));

describe('the volumes dir disk record', () => {
  it('lives under /var/lib/<plugin> as root and under the home dir otherwise', () => {
    const uid = vi.spyOn(process as { getuid: () => number }, 'getuid');
    uid.mockReturnValue(0);
    expect(pluginStateDir('p')).toBe('/var/lib/p');
    uid.mockReturnValue(1000);
    expect(pluginStateDir('p')).toBe(join(homedir(), '.local/state/p'));
    uid.mockRestore();
  });

  it('moves under DHVSDK_STATE_DIR when that holds an absolute path, so tests never write to /var/lib', () => {
    vi.stubEnv(STATE_DIR_VARIABLE, '/tmp/state');
    expect(pluginStateDir('p')).toBe('/tmp/state/p');
    expect(volumesDiskFolder('p', '/srv/volumes')).toMatch(/^\/tmp\/state\/p\/volumes-dirs\/[0-9a-f]{64}$/);
    vi.stubEnv(STATE_DIR_VARIABLE, 'relative');
    expect(pluginStateDir('p')).not.toContain('relative');
    vi.unstubAllEnvs();
  });

  it('records the volumes dir at create, accepts it again, and is gone with the last delete', async () => {
    const { id, record } = await created();
    expect(record).toMatchObject({
      VolumesDir: volumesDir,
      MountPoint: expect.any(String),
      Device: expect.any(String),
    });
    await expect(expectVolumesDisk(plugin, volumesDir, id)).resolves.toMatchObject({ recorded: true });
    await expect(expectVolumesDisk(plugin, volumesDir, randomUUID())).resolves.toMatchObject({ recorded: false });
    expect(await volumesDiskFoldersBelow(plugin, dir)).toEqual([
      { folder: volumesDiskFolder(plugin, volumesDir), volumesDir },
    ]);
    await forgetVolumesDisk(plugin, volumesDir, id);
    expect(existsSync(volumesDiskFolder(plugin, volumesDir))).toBe(false);
  });

  it("is gone with the last delete also when a killed create left its record's temporary file, and a live writer's stays", async () => {
    const { id } = await created();
    const folder = volumesDiskFolder(plugin, volumesDir);
    // What replaceFile leaves when its process is killed mid-write: one of a dead process, one of this live one.
    const dead = spawnSync('/bin/true').pid!;
    await writeFile(join(folder, `.tmp-${dead}-0a0b0c0d-${randomUUID()}.json.partial`), '');
    const live = join(folder, `.tmp-${process.pid}-0a0b0c0d-${randomUUID()}.json.partial`);
    await writeFile(live, '');
    await forgetVolumesDisk(plugin, volumesDir, id);
    expect(readdirSync(folder)).toEqual([live.slice(folder.length + 1)]);
    await rm(live);
    await forgetVolumesDisk(plugin, volumesDir, id);
    expect(existsSync(folder)).toBe(false);
  });

  it('refuses a volumes dir on another mount point, for the volume and for a new one, naming both disks', async () => {
    const { id, file, record } = await created();
    await rewrite(file, {
      ...record,
      MountPoint: volumesDir,
      MountSource: '/dev/sdz1',
      FsType: 'xfs',
      RootBirth: '1',
      DirBirth: '1',
    });
    for (const which of [id, randomUUID()]) {
      await expect(expectVolumesDisk(plugin, volumesDir, which)).rejects.toMatchObject({
        code: 'EWRONGDISK',
        message: expect.stringContaining(
          `then it was on the xfs filesystem of /dev/sdz1 (device ${record.Device}, made 1970-01-01T00:00:00.000Z) mounted at ${volumesDir}`,
        ),
      });
    }
  });

  // tmpfs keeps birth times; many an ext4 root made with 128-byte inodes does not.
  const shm = '/dev/shm';
  const births = existsSync(shm) && statSync(shm, { bigint: true }).birthtimeNs !== 0n;
  it.skipIf(!births)(
    'tells two filesystems apart on one mount point and device number by their root’s birth time, and accepts one disk under a new number (on /dev/shm)',
    async () => {
      await removeTempDir(dir);
      dir = await tempDir('volumes-disk', shm);
      volumesDir = join(dir, 'vols');
      await mkdir(volumesDir);
      const { id, file, record } = await created();
      expect(record.RootBirth).not.toBe('0');
      await rewrite(file, { ...record, RootBirth: '12345', DirBirth: '0' });
      await expect(expectVolumesDisk(plugin, volumesDir, id)).rejects.toMatchObject({ code: 'EWRONGDISK' });
      await rewrite(file, { ...record, Device: '259:99', DirBirth: '0' });
      await expect(expectVolumesDisk(plugin, volumesDir, id)).resolves.toMatchObject({ recorded: true });
    },
  );

  it('a record that cannot be written costs only the check, and says so', async () => {
    const check = await expectVolumesDisk(plugin, volumesDir, randomUUID());
    await mkdir(join(pluginStateDir(plugin), 'volumes-dirs'), { recursive: true });
    await writeFile(check.folder, 'a file where the folder goes');
    const log = vi.fn();
    await keepVolumesDisk(check, log);
    expect(log).toHaveBeenCalledWith(expect.stringMatching(/could not record the disk of .* will not be caught/));
  });
});
