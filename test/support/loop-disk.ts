import { execFileSync } from 'node:child_process';
import { closeSync, ftruncateSync, openSync, statSync } from 'node:fs';
import { deepestFirst, entriesAtOrBelow, formatDeviceNumber, readMountTableSync } from '@dhv/sdk/host';

/**
 * A filesystem image a test mounts as a disk (a volumes dir or a data dir on a disk of
 * its own), attached to a loop device the test knows by name, and a release that takes
 * down everything on it in order, even after a failed test. `mount -o loop` plus a lazy
 * unmount leaked the disk's loop device: a volume's loop device backed by an image on the
 * disk kept the disk busy, the lazily unmounted disk no longer showed that image's path
 * under the test's folder, and the disk's own device stayed attached to `disk.img (deleted)`.
 */
export interface LoopDisk {
  image: string;
  /** `/dev/loopN`. */
  device: string;
  /** Where the test mounted it. */
  mountPoint: string;
}

const run = (cmd: string, ...args: string[]) => execFileSync(cmd, args, { stdio: 'pipe' }).toString();

/** Makes an ext4 image of `bytes` at `image`, attaches it and mounts it at `mountPoint` (which must exist). */
export function mountLoopDisk(image: string, mountPoint: string, bytes: number, mkfsArgs: string[] = []): LoopDisk {
  const fd = openSync(image, 'w');
  try {
    ftruncateSync(fd, bytes);
  } finally {
    closeSync(fd);
  }
  run('/usr/sbin/mkfs.ext4', '-q', '-F', ...mkfsArgs, image);
  const device = run('/usr/sbin/losetup', '--find', '--show', image).trim();
  const disk = { image, device, mountPoint };
  try {
    run('/usr/bin/mount', device, mountPoint);
  } catch (err) {
    releaseLoopDisk(disk);
    throw err;
  }
  return disk;
}

/** Loop devices whose backing file lives on the filesystem of device `majorMinor`, by what the kernel says (not by path). */
function loopDevicesBackedOn(majorMinor: string): string[] {
  const listed = JSON.parse(run('/usr/sbin/losetup', '--list', '--json', '--output', 'NAME,BACK-MAJ:MIN') || '{}') as {
    loopdevices?: Array<{ name: string; 'back-maj:min': string }>;
  };
  return (listed.loopdevices ?? []).filter((l) => l['back-maj:min'].trim() === majorMinor).map((l) => l.name);
}

const quietly = (cmd: string, ...args: string[]) => {
  try {
    run(cmd, ...args);
    return true;
  } catch {
    return false;
  }
};

/**
 * Unmounts whatever is mounted at or below the disk's mount point (deepest first),
 * detaches loop devices backed by files on the disk (a loop volume's image), unmounts the
 * disk wherever it is still mounted, and detaches its device. Each step runs whatever
 * failed before it.
 */
export function releaseLoopDisk(disk: LoopDisk): void {
  const own = formatDeviceNumber(statSync(disk.device).rdev);
  for (const m of deepestFirst(entriesAtOrBelow(readMountTableSync(), disk.mountPoint))) {
    if (m.device !== own) quietly('/usr/bin/umount', m.mountPoint);
  }
  for (const device of loopDevicesBackedOn(own)) quietly('/usr/sbin/losetup', '-d', device);
  for (const m of deepestFirst(readMountTableSync().filter((e) => e.device === own))) {
    if (!quietly('/usr/bin/umount', m.mountPoint)) quietly('/usr/bin/umount', '-l', m.mountPoint);
  }
  quietly('/usr/sbin/losetup', '-d', disk.device);
}

/** Whether the disk's loop device is still attached to its image (for a test that checks its own cleanup). */
export function loopDiskAttached(disk: LoopDisk): boolean {
  const listed = run('/usr/sbin/losetup', '--list', '--noheadings', '--output', 'NAME,BACK-FILE');
  return listed.split('\n').some((line) => line.trim().startsWith(`${disk.device} `) && line.includes(disk.image));
}
