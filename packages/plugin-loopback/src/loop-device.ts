import { readFile, realpath } from 'node:fs/promises';
import { basename } from 'node:path';
import { PluginFailure } from '@dhv/sdk/plugin';
import { attachedLoopDevices, canonicalPath, detachLoopDevice as hostDetach, loopDevicesBackedBy } from '@dhv/sdk/host';
import { tool } from './tools.js';

export { deviceNumberOf } from '@dhv/sdk/host';

/** Every loop device backed by `imagePath`, found by the backing file the kernel records; empty when the image is missing. */
export async function loopDevicesFor(imagePath: string): Promise<string[]> {
  return (await loopDevicesBackedBy(imagePath)).map((l) => l.device);
}

/**
 * Loop devices still backed by this volume's image after someone unlinked it: the kernel
 * keeps the path it had, marked deleted. They are this volume's (its own path) and hold
 * the deleted image's space until detached.
 */
export async function loopDevicesOfDeletedImage(imagePath: string): Promise<string[]> {
  const where = await canonicalPath(imagePath);
  return (await attachedLoopDevices()).filter((l) => l.deleted && l.backingFile === where).map((l) => l.device);
}

/**
 * The loop device numbered `majorMinor` (as /proc/self/mountinfo names a mounted device)
 * when it is backed by `imagePath`, else undefined. One lookup in /sys/dev/block, where
 * loopDevicesFor reads every loop device of the host: at restore every volume's create
 * runs at once, and N volumes would cost N × N reads.
 */
export async function loopDeviceNumbered(majorMinor: string, imagePath: string): Promise<string | undefined> {
  if (!/^[0-9]+:[0-9]+$/.test(majorMinor)) return undefined;
  const sys = `/sys/dev/block/${majorMinor}`;
  const [backing, recorded, name] = await Promise.all([
    realpath(imagePath).catch(() => undefined),
    readFile(`${sys}/loop/backing_file`, 'utf8').catch(() => undefined),
    realpath(sys).then(basename, () => undefined),
  ]);
  if (backing === undefined || name === undefined || !/^loop[0-9]+$/.test(name)) return undefined;
  return recorded?.replace(/\n$/, '') === backing ? `/dev/${name}` : undefined;
}

const ATTACH_ATTEMPTS = 10;

/**
 * Attaches the image to a free loop device. `losetup --find` can hand the same free
 * device to two processes at once; the loser fails with "busy" and tries again, and the
 * winner checks the device it got really is backed by its image.
 */
export async function attachLoopDevice(imagePath: string, signal?: AbortSignal): Promise<string> {
  let lastError: unknown;
  for (let attempt = 1; attempt <= ATTACH_ATTEMPTS; attempt++) {
    try {
      const { stdout } = await tool('losetup', ['--find', '--show', imagePath], signal);
      const device = stdout.trim();
      if ((await loopDevicesFor(imagePath)).includes(device)) return device;
      lastError = new Error(`losetup reported ${device}, but that device is not backed by ${imagePath}`);
    } catch (err) {
      if (signal?.aborted) throw err;
      lastError = err;
      if (
        !/busy|failed to set up loop device|could not find any free loop device/i.test(
          String((err as PluginFailure).details?.stderr ?? ''),
        )
      ) {
        throw loopFailure(imagePath, err);
      }
    }
    await new Promise((r) => setTimeout(r, 10 * attempt));
  }
  throw loopFailure(imagePath, lastError);
}

function loopFailure(imagePath: string, err: unknown): PluginFailure {
  const stderr = String((err as PluginFailure).details?.stderr ?? '');
  const reason = err instanceof Error ? err.message : String(err);
  if (/could not find any free loop device|No such device|cannot find an unused loop device/i.test(stderr)) {
    return new PluginFailure(
      'ENOLOOP',
      `no free loop device for ${imagePath}: ${reason}; load the loop module (modprobe loop max_loop=...) or, in a container, make /dev/loop* available`,
    );
  }
  return new PluginFailure('ELOOPATTACH', `could not attach ${imagePath} to a loop device: ${reason}`, { imagePath });
}

/** Makes an attached loop device see its image's new size after the image grew. */
export async function refreshLoopCapacity(device: string, signal?: AbortSignal): Promise<void> {
  await tool('losetup', ['--set-capacity', device], signal);
}

export async function detachLoopDevice(device: string, signal?: AbortSignal): Promise<void> {
  await hostDetach(device, signal ? { signal } : {});
}
