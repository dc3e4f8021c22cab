import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { forceRemove } from '../packages/harness/src/conformance/scratch-dirs.js';
import {
  loopDeviceNamesBackedBelow,
  mountPointsAtOrBelow,
  removeTempDir,
  skipRootTests,
  tempDir,
} from './support/kit.js';

const sh = (file: string, args: string[]) => execFileSync(file, args, { encoding: 'utf8' }).trim();

describe.skipIf(skipRootTests("a check's scratch dir"))("a check's scratch dir, forcibly removed (root)", () => {
  let dir: string;
  let device = '';
  beforeEach(async () => {
    dir = await tempDir('check-scratch');
  });
  afterEach(async () => {
    // Whatever the test left, undone before the assertions can matter.
    try {
      sh('/usr/bin/umount', ['-R', join(dir, 'volumes', 'vol')]);
    } catch {}
    // Only while it is still ours: another test may have been given the same device since.
    const backing = device ? `/sys/block/${device.replace('/dev/', '')}/loop/backing_file` : '';
    if (backing && existsSync(backing) && readFileSync(backing, 'utf8').startsWith(dir)) {
      try {
        sh('/usr/sbin/losetup', ['-d', device]);
      } catch {}
    }
    await removeTempDir(dir);
  });

  test('unmounts what is mounted under it, detaches loop devices backed by files in it, and removes it', async () => {
    const image = join(dir, 'images', 'vol.img');
    const mountPoint = join(dir, 'volumes', 'vol');
    await mkdir(join(dir, 'images'), { recursive: true });
    await mkdir(mountPoint, { recursive: true });
    sh('/usr/bin/truncate', ['-s', '8M', image]);
    sh('/usr/sbin/mkfs.ext4', ['-q', image]);
    device = sh('/usr/sbin/losetup', ['--find', '--show', image]);
    sh('/usr/bin/mount', [device, mountPoint]);

    expect(await forceRemove(dir)).toEqual([]);

    expect(existsSync(dir)).toBe(false);
    expect(mountPointsAtOrBelow(dir)).toEqual([]);
    expect(loopDeviceNamesBackedBelow(dir)).toEqual([]);
  });
});
