import { execFileSync } from 'node:child_process';
import { truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { detachLoopDevice } from '@dhv/sdk/host';
import { removeTempDir, skipRootTests, tempDir } from './support/kit.js';

const losetup = (...args: string[]) => execFileSync('/usr/sbin/losetup', args, { stdio: 'pipe' }).toString().trim();

let dir: string | undefined;
const attached: string[] = [];
afterEach(async () => {
  for (const device of attached.splice(0)) {
    try {
      losetup('--detach', device);
    } catch {
      // already detached
    }
  }
  await removeTempDir(dir);
});

describe.skipIf(skipRootTests("the SDK's loop-device detach"))("the SDK's detachLoopDevice (root)", () => {
  it('is done when someone else detached the device since it was listed, and still fails for a device that is not a loop device', async () => {
    dir = await tempDir('detach');
    const image = join(dir, 'disk.img');
    await writeFile(image, '');
    await truncate(image, 8 * 1024 * 1024);
    const device = losetup('--find', '--show', image);
    attached.push(device);
    losetup('--detach', device);
    await expect(detachLoopDevice(device)).resolves.toBeUndefined();
    await expect(detachLoopDevice(join(dir, 'no-such-device'))).rejects.toThrow(/losetup/);
  });
});
