import { rm, rmdir, unlink } from 'node:fs/promises';
import {
  PluginFailure,
  expectCreatedPath,
  withVolumeLock,
  type DeleteHandlerRequest,
  type HandlerContext,
} from '@dhv/sdk/plugin';
import {
  deviceNumberOf,
  detachLoopDevice,
  forgetVolumesDisk,
  lastingMountsInOtherNamespaces,
  loopDevicesOfImage,
  mount,
  mountsAt,
  mountsBelow,
  mountsElsewhere,
  removeFile,
  unmount,
} from '@dhv/sdk/host';
import {
  ensureStateDir,
  entryKind,
  expectDirectoryOrMissing,
  removeEmptyFolders,
  volumeLayout,
  type VolumeLayout,
} from './layout.js';
import { checkHostFor, checkRoot } from './preflight.js';
import { MOUNT_OPTIONS } from './parameters.js';
import { growthMarker } from './expand.js';
import { PLUGIN_NAME } from './version.js';

/**
 * Unmounts the volume, detaches its loop device (found by its backing file), and removes
 * the image and the mount point. A volume that is already gone is success; one still in
 * use is an error, and then nothing is removed. Everything is found from the volume ID:
 * on the agent's cleanup delete (`cleanup`, no created path) DHV_CREATED_PATH was the
 * volumes dir, which holds every other volume.
 */
export async function deleteVolume(request: DeleteHandlerRequest, ctx: HandlerContext): Promise<void> {
  const layout = volumeLayout(request.volumesDir, request.volumeId);
  expectCreatedPath(request.createdPath, layout.mountPath);
  await deleteFromDisk(layout, ctx);
  await forgetVolumesDisk(PLUGIN_NAME, layout.volumesDir, request.volumeId);
}

async function deleteFromDisk(layout: VolumeLayout, ctx: HandlerContext): Promise<void> {
  try {
    // A link or file at the mount point is removed itself and never followed (the same rule as dhv-mkdir).
    const kind = await entryKind(layout.mountPath);
    if (kind === 'symlink' || kind === 'file') {
      await unlink(layout.mountPath);
      ctx.log(`removed the ${kind === 'symlink' ? 'symbolic link' : 'file'} ${layout.mountPath}`);
    }
    await expectDirectoryOrMissing(layout.mountPath, 'mount point');
    // Nothing to do needs no root: deleting what was never created succeeds anywhere.
    if (await alreadyGone(layout)) return;
  } catch (err) {
    checkRoot(); // a permission error as another user says "needs root", not EACCES
    throw err;
  }
  checkHostFor(undefined);
  const made = await ensureStateDir(layout);
  await withVolumeLock(layout.lockPath, () => removeVolume(layout, ctx), { signal: ctx.signal, folderMode: 0o700 });
  await removeEmptyFolders(layout, made).catch(() => {}); // tidiness only: the volume is gone either way
}

async function alreadyGone(layout: VolumeLayout): Promise<boolean> {
  for (const path of [layout.mountPath, layout.imagePath, layout.partialImagePath]) {
    if ((await entryKind(path)) !== 'missing') return false;
  }
  return (await mountsAt(layout.mountPath)).length === 0;
}

async function removeVolume(layout: VolumeLayout, ctx: HandlerContext): Promise<void> {
  const signal = ctx.signal;
  const devices = await loopDevicesOfImage(layout.imagePath);
  const ours = new Set(await Promise.all(devices.map(deviceNumberOf)));
  const mounted = await mountsAt(layout.mountPath);
  const foreign = mounted.find((m) => !ours.has(m.device));
  if (foreign) {
    throw new PluginFailure(
      'EMOUNTED',
      `${layout.mountPath} has ${foreign.source} mounted on it, which is not this volume's image; nothing was removed. Unmount it and delete again`,
      { path: layout.mountPath },
    );
  }
  // Unmounting here would leave the filesystem alive under those mounts, its image deleted.
  const elsewhere = await mountsElsewhere(ours, layout.mountPath);
  if (elsewhere.length > 0) throw inUse(elsewhere.map((m) => m.mountPoint));
  // The first unmount is the one that finds out whether the volume is in use; it removes nothing.
  for (let i = 0; i < mounted.length; i++) await unmount(layout.mountPath, { signal });
  // Copies in other mount namespaces that propagation did not take down with ours still hold it.
  const held = await lastingMountsInOtherNamespaces(ours, { signal });
  if (held.length > 0) {
    const [first] = mounted;
    if (first)
      await mount(
        first.source,
        layout.mountPath,
        first.fsType,
        first.options.filter((o) => o === 'ro' || (MOUNT_OPTIONS as readonly string[]).includes(o)),
      );
    throw inUse(held.map((m) => `${m.mountPoint} (in the mount namespace of process ${m.pid})`));
  }
  for (const device of devices) await detachLoopDevice(device, { signal });
  await removeFile(layout.imagePath);
  await removeFile(layout.partialImagePath);
  await removeFile(growthMarker(layout.imagePath));
  await removeMountPoint(layout.mountPath);
  ctx.log(`deleted ${layout.mountPath}${devices.length > 0 ? ` (detached ${devices.join(', ')})` : ''}`);
}

function inUse(where: string[]): PluginFailure {
  return new PluginFailure(
    'EVOLUMEBUSY',
    `the volume is in use: its filesystem is also mounted at ${where.join(', ')}; nothing was removed. Stop the workloads using it (or unmount those) and delete again`,
    { mountPoints: where },
  );
}

async function removeMountPoint(path: string): Promise<void> {
  try {
    await rmdir(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return;
    if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw err;
    // Files written while the volume was not mounted. Never recurse into another mount.
    const below = await mountsBelow(path);
    if (below.length > 0) {
      throw new PluginFailure(
        'EMOUNTED',
        `${path} still has ${below[0]!.mountPoint} mounted inside it; unmount it and delete again`,
        { path },
      );
    }
    await rm(path, { recursive: true, force: true });
  }
}
