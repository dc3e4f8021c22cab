import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type RequestInput } from '@dhv/sdk/client';
import { runAsDhv } from './support/run-as-dhv.js';
import { attachedLoopDevicesSync, readMountTableSync } from '@dhv/sdk/host';
import { builtPlugin, skipRootTests, tempDir, removeTempDir } from './support/kit.js';
import { loopDiskAttached, mountLoopDisk, releaseLoopDisk } from './support/loop-disk.js';
import { diskRecordFoldersBelow } from './support/plugin-disk-records.js';

/**
 * Issue 22, item 2, at the plugins themselves: dhv-mkdir and dhv-loopback, run directly as
 * an agent runs them (only DHV_* variables), record the disk their volumes dir was on and
 * refuse, in their own words, to make anything when it is on another one now: the disk
 * unmounted (the volumes dir an empty folder, or gone with it), or another disk mounted
 * in its place.
 */

const PLUGINS = ['dhv-mkdir', 'dhv-loopback'] as const;
const MiB = 1024 * 1024;
const NODE_ID = '9d1f3c6e-0000-4000-8000-00000000a022';

let t: string;
let volumesDir: string;

beforeEach(async () => {
  t = await tempDir('wrong-disk');
  volumesDir = join(t, 'vols');
  await mkdir(volumesDir);
});

afterEach(async () => {
  await removeTempDir(t);
});

const sh = (cmd: string, ...args: string[]) => execFileSync(cmd, args, { stdio: 'pipe' }).toString();
const mountTmpfs = (source: string, at: string) => sh('/usr/bin/mount', '-t', 'tmpfs', '-o', 'size=64m', source, at);
const request = (plugin: string, id: string, dir = volumesDir): RequestInput<'create'> => ({
  volumesDir: dir,
  volumeId: id,
  volumeName: `v-${id.slice(0, 8)}`,
  nodeId: NODE_ID,
  ...(plugin === 'dhv-loopback' ? { capacityMinBytes: 16n * BigInt(MiB), capacityMaxBytes: 16n * BigInt(MiB) } : {}),
});
const create = (plugin: string, id: string, dir = volumesDir) =>
  runAsDhv(builtPlugin(plugin as (typeof PLUGINS)[number]), 'create', request(plugin, id, dir), { pluginId: plugin });
const remove = (plugin: string, id: string, createdPath: string) =>
  runAsDhv(
    builtPlugin(plugin as (typeof PLUGINS)[number]),
    'delete',
    { volumesDir, volumeId: id, volumeName: `v-${id.slice(0, 8)}`, nodeId: NODE_ID, createdPath },
    { pluginId: plugin },
  );
const refusal = async (run: Promise<unknown>): Promise<string> => {
  const error = await run.then(
    () => undefined,
    (err: Error) => err,
  );
  expect(error, 'the create was not refused').toBeInstanceOf(Error);
  return error!.message;
};

/** What the disk of a loopback volume holds on the host, taken down as a reboot would: its mount, then its loop device. */
function takeDownVolume(path: string, id: string): void {
  if (readMountTableSync().some((m) => m.mountPoint === path)) sh('/usr/bin/umount', path);
  for (const l of attachedLoopDevicesSync())
    if (l.backingFile.endsWith(`${id}.img`)) sh('/usr/sbin/losetup', '-d', l.device);
}

describe.skipIf(skipRootTests('the plugins’ wrong-disk guard (tmpfs and loop mounts)'))(
  'issue 22: the reference plugins refuse a volumes dir on the wrong disk',
  () => {
    it.each(PLUGINS)(
      '%s: the disk unmounted, the restore and a new create are refused naming the disk, nothing is made; another disk in its place too; its record goes with the last delete',
      async (plugin) => {
        mountTmpfs('dhv-disk-a', volumesDir);
        const id = randomUUID();
        const first = await create(plugin, id);
        await writeFile(join(first.path, 'data'), 'on disk a\n');
        const [folder] = await diskRecordFoldersBelow(t);
        expect(folder, 'no record of the disk').toBeDefined();
        const record = JSON.parse(await readFile(join(folder!, `${id}.json`), 'utf8')) as Record<string, string>;
        expect(record).toMatchObject({
          VolumesDir: volumesDir,
          MountPoint: volumesDir,
          MountSource: 'dhv-disk-a',
          FsType: 'tmpfs',
        });

        takeDownVolume(first.path, id);
        sh('/usr/bin/umount', volumesDir);

        const restore = await refusal(create(plugin, id));
        expect(restore).toContain(
          `volumes dir ${volumesDir} (DHV_VOLUMES_DIR) is not on the disk its volumes were created on`,
        );
        expect(restore).toMatch(
          new RegExp(
            `then it was on the tmpfs filesystem of dhv-disk-a \\(device ${record.Device}, made [^)]+\\) mounted at ${volumesDir}`,
          ),
        );
        expect(restore).toContain(`Mount dhv-disk-a at ${volumesDir} again`);
        expect(restore).toContain(`remove ${folder}`);
        const fresh = await refusal(create(plugin, randomUUID()));
        expect(fresh).toContain('That disk is missing');
        expect(await readdir(volumesDir)).toEqual([]);

        mountTmpfs('dhv-disk-b', volumesDir);
        const swapped = await refusal(create(plugin, id));
        expect(swapped).toMatch(
          /now it is on the tmpfs filesystem of dhv-disk-b \(device [0-9:]+, made [^)]+\) mounted at /,
        );
        expect(await readdir(volumesDir)).toEqual([]);

        // What the message offers when it is the right disk after all: forget the record.
        await rm(folder!, { recursive: true });
        const again = await create(plugin, id);
        expect(await diskRecordFoldersBelow(t)).toEqual([folder]);
        await remove(plugin, id, again.path);
        expect(existsSync(again.path)).toBe(false);
        expect(await diskRecordFoldersBelow(t)).toEqual([]);
        expect(existsSync(folder!)).toBe(false);
      },
      120_000,
    );

    it.each(PLUGINS)(
      '%s: a volumes dir the plugin made on a disk mounted at its parent is not made again on the folder below once the disk is gone',
      async (plugin) => {
        const diskAt = join(t, 'disk');
        const inner = join(diskAt, 'vols');
        await mkdir(diskAt);
        mountTmpfs('dhv-disk-parent', diskAt);
        const id = randomUUID();
        const made = await create(plugin, id, inner);
        takeDownVolume(made.path, id);
        sh('/usr/bin/umount', diskAt);

        const message = await refusal(create(plugin, id, inner));

        expect(message).toContain(`volumes dir ${inner} (DHV_VOLUMES_DIR) is not on the disk`);
        expect(message).toContain(`mounted at ${diskAt}, now it is on`);
        expect(await readdir(diskAt)).toEqual([]);
      },
      120_000,
    );

    it('a loop-mounted disk still holding a mounted loopback volume is released whole by the test kit: no loop device left for the disk or the volume', async () => {
      const disk = mountLoopDisk(join(t, 'disk.img'), volumesDir, 64 * MiB);
      let volumeDevice: string | undefined;
      const id = randomUUID();
      try {
        const made = await create('dhv-loopback', id);
        volumeDevice = readMountTableSync().find((m) => m.mountPoint === made.path)?.source;
        expect(volumeDevice).toMatch(/^\/dev\/loop/);
      } finally {
        releaseLoopDisk(disk);
      }
      expect(loopDiskAttached(disk)).toBe(false);
      expect(
        attachedLoopDevicesSync().filter((l) => l.device === volumeDevice && l.backingFile.endsWith(`${id}.img`)),
      ).toEqual([]);
    }, 120_000);
  },
);
