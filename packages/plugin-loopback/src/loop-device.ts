import { stat } from 'node:fs/promises';
import { PluginFailure } from '@dhv/sdk/plugin';
import { tool } from './tools.js';

interface LoopListing {
  loopdevices?: { name: string; 'back-ino'?: number | string | null; 'back-maj:min'?: string | null }[];
}

/** `major:minor` of the filesystem holding a file, as losetup prints BACK-MAJ:MIN. */
function deviceNumber(dev: number): string {
  const major = Number((BigInt(dev) >> 8n) & 0xfffn) | Number((BigInt(dev) >> 32n) & ~0xfffn);
  const minor = Number(BigInt(dev) & 0xffn) | Number((BigInt(dev) >> 12n) & ~0xffn);
  return `${major}:${minor}`;
}

/**
 * Every loop device backed by `imagePath`, matched by inode and device rather than by
 * name, so a renamed or symlinked path cannot fool it. Empty when the image is missing.
 */
export async function loopDevicesFor(imagePath: string, signal?: AbortSignal): Promise<string[]> {
  let image;
  try {
    image = await stat(imagePath);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const { stdout } = await tool('losetup', ['--list', '--json', '--output', 'NAME,BACK-INO,BACK-MAJ:MIN'], signal);
  if (stdout.trim() === '') return [];
  const listing = JSON.parse(stdout) as LoopListing;
  const dev = deviceNumber(image.dev);
  return (listing.loopdevices ?? [])
    .filter((d) => String(d['back-ino'] ?? '').trim() === String(image.ino) && String(d['back-maj:min'] ?? '').trim() === dev)
    .map((d) => d.name);
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
      if ((await loopDevicesFor(imagePath, signal)).includes(device)) return device;
      lastError = new Error(`losetup reported ${device}, but that device is not backed by ${imagePath}`);
    } catch (err) {
      if (signal?.aborted) throw err;
      lastError = err;
      if (!/busy|failed to set up loop device|could not find any free loop device/i.test(String((err as PluginFailure).details?.stderr ?? ''))) {
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
  await tool('losetup', ['--detach', device], signal);
}

/** Detaches every loop device backed by the image. */
export async function detachAll(imagePath: string, signal?: AbortSignal): Promise<void> {
  for (const device of await loopDevicesFor(imagePath, signal)) await detachLoopDevice(device, signal);
}

/** `major:minor` of a block device, as /proc/self/mountinfo names a mounted device. */
export async function deviceNumberOf(device: string): Promise<string> {
  return deviceNumber((await stat(device)).rdev);
}
