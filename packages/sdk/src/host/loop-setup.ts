import { basename } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { PluginFailure } from '../helpers/errors.js';
import { readFile, realpath } from '../helpers/fs-calls.js';
import { hostTool, type HostCallOptions } from './host-tools.js';
import { attachedLoopDevices, loopDevicesBackedBy } from './loop-devices.js';
import { canonicalPath } from './mount-table.js';
import { detachLoopDevice } from './teardown.js';

const ATTACH_ATTEMPTS = 10;
const RETRYABLE = /busy|failed to set up loop device|could not find any free loop device/i;

const stderrOf = (err: unknown) => String((err as PluginFailure).details?.stderr ?? '');

/**
 * Attaches `imagePath` to a free loop device and returns the device. `losetup --find` can
 * hand one free device to two processes at once: the loser fails with "busy" and tries
 * again, and the winner checks the device it got really is backed by its image. No free
 * device is ENOLOOP (saying how to get more), any other failure ELOOPATTACH. A failure
 * detaches every device the image gained meanwhile: the caller holds the volume's lock, or
 * another process's attach of the same image in that moment would go too.
 */
export async function attachLoopDevice(imagePath: string, options: HostCallOptions = {}): Promise<string> {
  const before = new Set((await loopDevicesBackedBy(imagePath)).map((l) => l.device));
  try {
    return await attachToFreeDevice(imagePath, options);
  } catch (err) {
    // A losetup killed by the signal may have attached the image before it died: what it
    // attached is detached again, or the device would hold the image with no one to know.
    for (const { device } of await loopDevicesBackedBy(imagePath).catch(() => []))
      if (!before.has(device)) await detachLoopDevice(device).catch(() => {});
    throw err;
  }
}

async function attachToFreeDevice(imagePath: string, options: HostCallOptions): Promise<string> {
  let lastError: unknown;
  for (let attempt = 1; attempt <= ATTACH_ATTEMPTS; attempt++) {
    try {
      const { stdout } = await hostTool('losetup', ['--find', '--show', imagePath], options);
      const device = stdout.trim();
      if ((await loopDevicesBackedBy(imagePath)).some((l) => l.device === device)) return device;
      lastError = new Error(`losetup reported ${device}, but that device is not backed by ${imagePath}`);
    } catch (err) {
      if (options.signal?.aborted) throw err;
      lastError = err;
      if (!RETRYABLE.test(stderrOf(err))) throw loopFailure(imagePath, err);
    }
    await sleep(10 * attempt);
  }
  throw loopFailure(imagePath, lastError);
}

function loopFailure(imagePath: string, err: unknown): PluginFailure {
  const reason = err instanceof Error ? err.message : String(err);
  if (/could not find any free loop device|No such device|cannot find an unused loop device/i.test(stderrOf(err))) {
    return new PluginFailure(
      'ENOLOOP',
      `no free loop device for ${imagePath}: ${reason}; load the loop module (modprobe loop max_loop=...) or, in a container, make /dev/loop* available`,
    );
  }
  return new PluginFailure('ELOOPATTACH', `could not attach ${imagePath} to a loop device: ${reason}`, { imagePath });
}

/**
 * Loop devices still backed by `imagePath` after someone unlinked it: the kernel keeps the
 * path it had, marked deleted. They hold the deleted image's space until detached.
 */
export async function loopDevicesOfDeletedImage(imagePath: string): Promise<string[]> {
  const where = await canonicalPath(imagePath);
  return (await attachedLoopDevices()).filter((l) => l.deleted && l.backingFile === where).map((l) => l.device);
}

/** Every loop device backed by `imagePath`, also after the image was unlinked. */
export async function loopDevicesOfImage(imagePath: string): Promise<string[]> {
  return [
    ...(await loopDevicesBackedBy(imagePath)).map((l) => l.device),
    ...(await loopDevicesOfDeletedImage(imagePath)),
  ];
}

/** Detaches every loop device backed by `imagePath` (also after it was unlinked); returns the devices. */
export async function detachLoopDevicesOfImage(imagePath: string, options: HostCallOptions = {}): Promise<string[]> {
  const devices = await loopDevicesOfImage(imagePath);
  for (const device of devices) await detachLoopDevice(device, options);
  return devices;
}

/**
 * The loop device numbered `majorMinor` (as the mount table names a mounted device) when
 * it is backed by `imagePath`, else undefined. One lookup in /sys/dev/block, where
 * `loopDevicesBackedBy` reads every loop device of the host: at restore every volume's
 * create runs at once, and N volumes would cost N × N reads.
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

/** Makes an attached loop device see its image's new size after the image grew (or shrank back). */
export async function refreshLoopCapacity(device: string, options: HostCallOptions = {}): Promise<void> {
  await hostTool('losetup', ['--set-capacity', device], options);
}
