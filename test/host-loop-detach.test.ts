import { execFileSync, spawn } from 'node:child_process';
import { truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { detachLoopDevice, deviceReleased, NAMESPACE_SETUP_GRACE_MS } from '@dhv/sdk/host';
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

/** An 8 MiB image in this test's folder, attached to a loop device the test detaches after it. */
async function attachedImage(): Promise<string> {
  const image = join(dir!, 'disk.img');
  await writeFile(image, '');
  await truncate(image, 8 * 1024 * 1024);
  const device = losetup('--find', '--show', image);
  attached.push(device);
  return device;
}

describe.skipIf(skipRootTests("the SDK's loop-device detach"))("the SDK's detachLoopDevice (root)", () => {
  it('is done when someone else detached the device since it was listed, and still fails for a device that is not a loop device', async () => {
    dir = await tempDir('detach');
    const device = await attachedImage();
    losetup('--detach', device);
    await expect(detachLoopDevice(device)).resolves.toBeUndefined();
    await expect(detachLoopDevice(join(dir, 'no-such-device'))).rejects.toThrow(/losetup/);
  });

  it('says a device is released once a brief exclusive holder lets go (e2fsck would have found it in use), and not while one lasts', async () => {
    dir = await tempDir('released');
    const device = await attachedImage();
    // What a mount in a namespace that just ended is for a moment: the device held exclusively, mounted nowhere.
    const holdFor = (seconds: number) =>
      new Promise<ReturnType<typeof spawn>>((resolve, reject) => {
        const holder = spawn(
          process.execPath,
          [
            '-e',
            `const fs = require('node:fs'); fs.openSync(process.argv[1], fs.constants.O_RDONLY | fs.constants.O_EXCL); console.log('held'); setTimeout(() => {}, ${seconds * 1000});`,
            device,
          ],
          { stdio: ['ignore', 'pipe', 'inherit'] },
        );
        holder.once('error', reject);
        holder.stdout!.once('data', () => resolve(holder));
      });
    expect(await deviceReleased(device)).toBe(true);

    const brief = await holdFor(0.4);
    const started = Date.now();
    expect(await deviceReleased(device)).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(200);
    brief.kill('SIGKILL');

    const lasting = await holdFor(60);
    try {
      const since = Date.now();
      expect(await deviceReleased(device)).toBe(false);
      expect(Date.now() - since).toBeGreaterThanOrEqual(NAMESPACE_SETUP_GRACE_MS);
    } finally {
      lasting.kill('SIGKILL');
    }
  });
});
