import { closeSync, constants, openSync } from 'node:fs';
import { readdir, readFile, readlink } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { PluginFailure } from '../helpers/errors.js';
import { hostTool, type HostCallOptions } from './host-tools.js';
import { canonicalPath, mountsAt, parseMountinfo, readMountTable, type MountEntry } from './mount-table.js';

/** Mounts `source` (a device, or an image with the `loop` option) at `path`: `mount -t <fsType> [-o <options>]`. */
export async function mount(
  source: string,
  path: string,
  fsType: string,
  options: readonly string[] = [],
  callOptions: HostCallOptions = {},
): Promise<void> {
  const before = callOptions.signal ? new Set((await mountsAt(path)).map((m) => m.mountId)) : undefined;
  try {
    await hostTool(
      'mount',
      ['-t', fsType, ...(options.length > 0 ? ['-o', options.join(',')] : []), source, path],
      callOptions,
    );
  } catch (err) {
    // A mount killed by the signal may have mounted before it died: what it mounted is
    // unmounted again, or the caller's undo would find its mount point busy.
    const after = before ? await mountsAt(path).catch(() => []) : [];
    for (const m of after) if (!before?.has(m.mountId)) await unmount(path).catch(() => {});
    throw err;
  }
}

/**
 * Remounts what is mounted at `path` with exactly `options` (`ro`, `noexec`, ...): the
 * options it has now and you do not name are dropped, where a bare `mount -o remount`
 * would keep them.
 */
export async function remount(
  path: string,
  fsType: string,
  options: readonly string[],
  callOptions: HostCallOptions = {},
): Promise<void> {
  const flags = ['ro', 'noexec', 'nosuid', 'nodev', 'noatime'];
  const explicit = [...options, ...flags.filter((f) => !options.includes(f)).map(opposite)];
  await mount('none', path, fsType, ['remount', ...explicit], callOptions);
}

const opposite = (flag: string) => (flag === 'ro' ? 'rw' : flag === 'noatime' ? 'relatime' : flag.slice(2));

/** The filesystem at `path` cannot be unmounted: a process has files open or its working directory there. */
export class VolumeBusyError extends PluginFailure {
  constructor(readonly path: string) {
    super(
      'EVOLUMEBUSY',
      `the volume at ${path} is in use (a process has files open or its working directory there), so it cannot be unmounted; stop the workloads using it and try again`,
      { path },
    );
    this.name = 'VolumeBusyError';
  }
}

/** Unmounts `path` (`lazy`: `umount -l`); a busy filesystem throws VolumeBusyError. */
export async function unmount(path: string, options: HostCallOptions & { lazy?: boolean } = {}): Promise<void> {
  try {
    await hostTool('umount', [...(options.lazy ? ['-l'] : []), path], options);
  } catch (err) {
    if (err instanceof PluginFailure && /busy/i.test(String(err.details.stderr ?? err.message))) {
      throw new VolumeBusyError(path);
    }
    throw err;
  }
}

/** Mounts of any of `devices` (major:minor) in this mount namespace other than the one at `path`: bind mounts, mostly. */
export async function mountsElsewhere(devices: ReadonlySet<string>, path: string): Promise<MountEntry[]> {
  const where = await canonicalPath(path);
  return (await readMountTable()).filter((m) => devices.has(m.device) && m.mountPoint !== where);
}

export interface ForeignMount extends MountEntry {
  /** A process in the mount namespace that holds the mount. */
  pid: number;
}

/**
 * Mounts of any of `devices` in every other mount namespace. A container sees a volume
 * through its own copy of the mount; unless mount propagation removed that copy with
 * ours, it keeps the filesystem alive after we unmount it.
 */
async function mountsInOtherNamespaces(devices: ReadonlySet<string>): Promise<ForeignMount[]> {
  const found: ForeignMount[] = [];
  const seen = new Set([await readlink('/proc/self/ns/mnt').catch(() => '')]);
  for (const entry of await readdir('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue;
    const namespace = await readlink(`/proc/${entry}/ns/mnt`).catch(() => undefined);
    if (namespace === undefined || seen.has(namespace)) continue;
    seen.add(namespace);
    const text = await readFile(`/proc/${entry}/mountinfo`, 'latin1').catch(() => '');
    for (const m of parseMountinfo(text)) if (devices.has(m.device)) found.push({ ...m, pid: Number(entry) });
  }
  return found;
}

/**
 * How long a copy in another mount namespace may take to go before it counts as holding
 * the volume. Whoever makes a mount namespace (a container runtime, an `exec` task's
 * set-up, `unshare -m`) starts with a copy of every mount on the machine and drops the
 * ones it does not keep a moment later; a delete in that moment must not be refused.
 */
export const NAMESPACE_SETUP_GRACE_MS = 2_000;
const RECHECK_MS = 25;

/** The copies of `devices` in other mount namespaces that are still there after the grace (see above). */
export async function lastingMountsInOtherNamespaces(
  devices: ReadonlySet<string>,
  options: HostCallOptions = {},
): Promise<ForeignMount[]> {
  const deadline = Date.now() + NAMESPACE_SETUP_GRACE_MS;
  let held = await mountsInOtherNamespaces(devices);
  while (held.length > 0 && Date.now() < deadline) {
    await sleep(RECHECK_MS, undefined, options.signal ? { signal: options.signal } : {});
    held = await mountsInOtherNamespaces(devices);
  }
  return held;
}

/**
 * Whether `device` opens exclusively (nothing mounts it, nothing holds it open so) within the
 * grace above: the kernel releases the last copy of a mount in a namespace that just ended a
 * moment after the namespace is gone from /proc, and a tool that needs the device to itself
 * (e2fsck, resize2fs offline) would find it in use. An error other than EBUSY is the tool's to say.
 */
export async function deviceReleased(device: string, options: HostCallOptions = {}): Promise<boolean> {
  const deadline = Date.now() + NAMESPACE_SETUP_GRACE_MS;
  for (;;) {
    try {
      closeSync(openSync(device, constants.O_RDONLY | constants.O_EXCL));
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EBUSY') return true;
    }
    if (Date.now() >= deadline) return false;
    await sleep(RECHECK_MS, undefined, options.signal ? { signal: options.signal } : {});
  }
}
