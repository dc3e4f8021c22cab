import { open } from 'node:fs/promises';
import { diskSpace } from '../helpers/disk-space.js';
import { PluginFailure } from '../helpers/errors.js';
import { hostTool, type HostCallOptions } from './host-tools.js';
import { deviceNumberOf } from './loop-devices.js';
import { mountsAt } from './mount-table.js';
import { deviceReleased, lastingMountsInOtherNamespaces, mount, unmount, VolumeBusyError } from './mounts.js';

export const FILESYSTEMS = ['ext4', 'xfs'] as const;
export type FilesystemType = (typeof FILESYSTEMS)[number];

/**
 * mkfs arguments that keep creation fast however large the image: ext4 leaves inode
 * tables and the journal to be initialised lazily, and neither tool discards (on a
 * preallocated image a discard would punch the reserved blocks out again). ext4
 * reserves no blocks for root (`-m 0`): a volume's capacity is all for its workloads.
 */
const MKFS = {
  ext4: { tool: 'mkfs.ext4', args: ['-q', '-F', '-m', '0', '-E', 'lazy_itable_init=1,lazy_journal_init=1,nodiscard'] },
  xfs: { tool: 'mkfs.xfs', args: ['-q', '-K'] },
} as const;

/** Makes an empty filesystem on `target` (an image file or a device). */
export async function makeFilesystem(fs: FilesystemType, target: string, options: HostCallOptions = {}): Promise<void> {
  const { tool, args } = MKFS[fs];
  await hostTool(tool, [...args, target], options);
}

/** The filesystem on an image or device, read from its superblock magic (ext4: 0xEF53 at 1080; xfs: "XFSB" at 0). */
export async function detectFilesystem(target: string): Promise<FilesystemType | undefined> {
  const handle = await open(target, 'r');
  try {
    const buffer = Buffer.alloc(1082);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    if (bytesRead >= 4 && buffer.toString('latin1', 0, 4) === 'XFSB') return 'xfs';
    if (bytesRead >= 1082 && buffer.readUInt16LE(1080) === 0xef53) return 'ext4';
    return undefined;
  } finally {
    await handle.close();
  }
}

const exitCodeOf = (err: unknown) => (err instanceof PluginFailure ? err.details.exitCode : undefined);
const firstLine = (err: unknown) => (err instanceof Error ? err.message : String(err)).split('\n')[0]!.trim();

/**
 * Checks an unmounted filesystem before it is mounted again (after a reboot, say). e2fsck
 * -p repairs what is safe to repair (its exits 1 and 2 say it did); xfs repairs itself by
 * replaying its log at mount, so xfs_repair only looks (-n), and a log waiting to be
 * replayed is not an error. Anything else is EFSCHECK, naming the command to repair by hand,
 * or saying the device is in use when it did not open exclusively within the grace.
 */
export async function checkFilesystem(
  fs: FilesystemType,
  device: string,
  options: HostCallOptions = {},
): Promise<void> {
  // A killed call's helper or a namespace that just ended may hold it a moment longer (mounts.ts).
  if (!(await deviceReleased(device, options)))
    throw new PluginFailure(
      'EFSCHECK',
      `the ${fs} filesystem on ${device} was not checked, so it was not mounted: the device is in use (mounted elsewhere, or open exclusively); stop what uses it and try again`,
      { device },
    );
  try {
    if (fs === 'ext4') await hostTool('e2fsck', ['-p', device], options);
    else await hostTool('xfs_repair', ['-n', device], options);
  } catch (err) {
    const exitCode = exitCodeOf(err);
    const stderr = String(err instanceof PluginFailure ? (err.details.stderr ?? '') : '');
    if (fs === 'ext4' && (exitCode === 1 || exitCode === 2)) return;
    if (fs === 'xfs' && /log/i.test(stderr) && /replay/i.test(stderr)) return;
    throw new PluginFailure(
      'EFSCHECK',
      `the ${fs} filesystem on ${device} has errors that were not repaired, so it was not mounted: ${err instanceof Error ? err.message : String(err)}; repair it by hand (${fs === 'ext4' ? 'e2fsck -f' : 'xfs_repair'} ${device}) and try again`,
      { device },
    );
  }
}

export interface MountedFilesystem {
  fs: FilesystemType;
  /**
   * The (loop) device it is on, already grown. A loop device `mount -o loop` made is
   * detached at unmount and cannot be grown offline: attach with `attachLoopDevice`.
   */
  device: string;
  mountPath: string;
  /** Mount options to mount it again with after an offline growth. */
  mountOptions?: readonly string[];
}

/**
 * Grows a mounted filesystem to fill its (already grown) device, keeping the data: online
 * where the kernel allows (xfs always, ext4 through resize2fs), else, for ext4, unmounted
 * for a moment and mounted again. Growing to the size it already has does nothing.
 * Failures are EEXPAND, or EEXPANDBUSY when ext4 must go offline and the volume is in use;
 * `what` (`grow /srv/v from 1 GiB to 2 GiB`) starts their message. A failure after the
 * filesystem changed size anyway (resize2fs killed by the signal once it had grown it)
 * carries `details.filesystemGrown`: the device must then keep its new size.
 */
export async function growFilesystem(
  v: MountedFilesystem,
  options: HostCallOptions & { what?: string } = {},
): Promise<void> {
  const before = (await diskSpace(v.mountPath)).size;
  try {
    await growOnlineOrOffline(v, options);
  } catch (err) {
    const after = await diskSpace(v.mountPath).then(
      (space) => space.size,
      () => undefined,
    );
    if (after === before) throw err;
    const failure = err instanceof PluginFailure ? err : undefined;
    throw new PluginFailure(failure?.code ?? 'EEXPAND', err instanceof Error ? err.message : String(err), {
      ...failure?.details,
      filesystemGrown: true,
    });
  }
}

async function growOnlineOrOffline(v: MountedFilesystem, options: HostCallOptions & { what?: string }): Promise<void> {
  const what = options.what ?? `grow the ${v.fs} filesystem at ${v.mountPath}`;
  try {
    if (v.fs === 'xfs') await hostTool('xfs_growfs', [v.mountPath], options);
    else await hostTool('resize2fs', [v.device], options);
    return;
  } catch (online) {
    if (v.fs === 'xfs' || options.signal?.aborted) {
      throw new PluginFailure(
        'EEXPAND',
        `cannot ${what}: growing the ${v.fs} filesystem failed: ${firstLine(online)}`,
        {
          mountPath: v.mountPath,
        },
      );
    }
    const mountedBefore = (await mountsAt(v.mountPath)).length;
    try {
      await unmount(v.mountPath, options);
    } catch (busy) {
      // A umount killed by the signal once it had unmounted: mounted again, as the caller had it.
      if ((await mountsAt(v.mountPath).catch(() => [])).length < mountedBefore)
        await mount(v.device, v.mountPath, v.fs, v.mountOptions ?? []);
      throw new PluginFailure(
        'EEXPANDBUSY',
        `cannot ${what}: its ext4 filesystem cannot grow while mounted (${firstLine(online)}), ` +
          (busy instanceof VolumeBusyError
            ? 'and the volume is in use, so it cannot be unmounted to grow offline; stop the workloads using it and try again'
            : `and unmounting it failed: ${firstLine(busy)}`),
        { mountPath: v.mountPath },
      );
    }
  }
  try {
    await offlineAlone(v, what, options);
    await hostTool('e2fsck', ['-f', '-p', v.device], options).catch((err: unknown) => {
      const exitCode = exitCodeOf(err);
      if (exitCode !== 1 && exitCode !== 2) throw err;
    });
    await hostTool('resize2fs', [v.device], options);
  } finally {
    await mount(v.device, v.mountPath, v.fs, v.mountOptions ?? []);
  }
}

/**
 * Unmounted here, the filesystem may still be mounted in another mount namespace: one made a
 * moment ago (a task starting) holds a copy of every mount until it drops them, and e2fsck
 * would refuse the device as in use. Grows once such copies are gone, within the grace a
 * delete gives them; else says which process holds it (the caller mounts it again).
 */
async function offlineAlone(v: MountedFilesystem, what: string, options: HostCallOptions): Promise<void> {
  const held = await lastingMountsInOtherNamespaces(new Set([await deviceNumberOf(v.device)]), options);
  if (held.length > 0)
    throw new PluginFailure(
      'EEXPANDBUSY',
      `cannot ${what}: its ext4 filesystem cannot grow while mounted, and it is still mounted in the mount namespace of process ${held[0]!.pid} (at ${held[0]!.mountPoint}), so it cannot grow offline; stop the workloads using it and try again`,
      { mountPath: v.mountPath },
    );
  if (await deviceReleased(v.device, options)) return;
  throw new PluginFailure(
    'EEXPANDBUSY',
    `cannot ${what}: its ext4 filesystem cannot grow while mounted, and ${v.device} is still in use once unmounted (a program holds it open exclusively, or a mount of it is still being released), so it cannot grow offline; stop what uses it and try again`,
    { mountPath: v.mountPath },
  );
}
