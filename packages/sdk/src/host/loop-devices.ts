import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { realpath, stat } from '../helpers/fs-calls.js';
import { formatDeviceNumber } from '../helpers/device-number.js';

export interface LoopDevice {
  device: string;
  /** The backing file as the kernel resolved it when the device was attached. */
  backingFile: string;
  /** The backing file was unlinked since: the kernel appends " (deleted)" to its path. */
  deleted: boolean;
}

const SYS_BLOCK = '/sys/block';
const isLoop = (name: string) => /^loop[0-9]+$/.test(name);

function parseBacking(device: string, text: string): LoopDevice {
  const line = text.replace(/\n$/, '');
  const deleted = line.endsWith(' (deleted)');
  return { device: `/dev/${device}`, backingFile: deleted ? line.slice(0, -' (deleted)'.length) : line, deleted };
}

const byDevice = (a: LoopDevice, b: LoopDevice) => Number(a.device.slice(9)) - Number(b.device.slice(9));

/**
 * Every attached loop device, from /sys/block/loopN/loop/backing_file (only attached
 * devices have one); never by guessing a device name. [] where sysfs is not mounted. Read
 * synchronously all the same: sysfs never waits on a disk, and a host has dozens of loop
 * devices, each file a few round trips through libuv's threadpool when read asynchronously.
 */
export async function attachedLoopDevices(): Promise<LoopDevice[]> {
  return attachedLoopDevicesSync();
}

export function attachedLoopDevicesSync(): LoopDevice[] {
  const found: LoopDevice[] = [];
  let names: string[];
  try {
    names = readdirSync(SYS_BLOCK).filter(isLoop);
  } catch {
    return [];
  }
  for (const name of names) {
    const file = `${SYS_BLOCK}/${name}/loop/backing_file`;
    // Most of a host's loop devices are not attached: asked first, so that each costs no exception.
    if (!existsSync(file)) continue;
    try {
      found.push(parseBacking(name, readFileSync(file, 'utf8')));
    } catch {
      // detached meanwhile
    }
  }
  return found.sort(byDevice);
}

/** Loop devices backed by `imagePath` (compared with every link resolved); [] when the image is missing. */
export async function loopDevicesBackedBy(imagePath: string): Promise<LoopDevice[]> {
  let backing: string;
  try {
    backing = await realpath(imagePath);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  return (await attachedLoopDevices()).filter((l) => !l.deleted && l.backingFile === backing);
}

/** Loop devices whose backing file is strictly below `dir` (`dir` as given, or with its links resolved). */
export async function loopDevicesBackedBelow(dir: string): Promise<LoopDevice[]> {
  const dirs = new Set([dir, await realpath(dir).catch(() => dir)]);
  return (await attachedLoopDevices()).filter((l) => [...dirs].some((d) => l.backingFile.startsWith(`${d}/`)));
}

/** `major:minor` of a block device, as mountinfo names a mounted device. */
export async function deviceNumberOf(device: string): Promise<string> {
  return formatDeviceNumber((await stat(device)).rdev);
}
