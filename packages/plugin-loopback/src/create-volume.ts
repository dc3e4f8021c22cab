import { chmod, chown, mkdir, rename, rmdir, stat } from 'node:fs/promises';
import {
  PluginFailure,
  acquireVolumeLock,
  formatSize,
  type CreateRequest,
  type CreateResponse,
  type HandlerContext,
} from '@dhv/sdk/plugin';
import {
  attachLoopDevice,
  checkFilesystem,
  checkRoom,
  createSparseImage,
  detachLoopDevice,
  detectFilesystem,
  expectVolumesDisk,
  imageSize,
  keepVolumesDisk,
  loopDeviceNumbered,
  loopDevicesBackedBy,
  makeFilesystem,
  mount,
  mountsAt,
  preallocate,
  remount,
  removeFile,
  unmount,
} from '@dhv/sdk/host';
import { parseParameters, type LoopbackParameters } from './parameters.js';
import { provisionedSize } from './size.js';
import {
  ensureStateDir,
  entryKind,
  expectDirectoryOrMissing,
  removeEmptyFolders,
  volumeLayout,
  type VolumeLayout,
} from './layout.js';
import { checkHostFor } from './preflight.js';
import { expandVolume, finishInterruptedGrowth } from './expand.js';
import { PLUGIN_NAME } from './version.js';

interface Job {
  layout: VolumeLayout;
  params: LoopbackParameters;
  fsGiven: boolean;
  size: bigint;
  step: HandlerContext['step'];
  ctx: HandlerContext;
}

/**
 * Creates, restores or expands a volume: an image in the hidden folder, attached to a
 * loop device and mounted at `<volumes dir>/<id>`. Each part is a `ctx.step` with its undo:
 * whatever this call made is undone when it fails, and `invoke({ failAt: { step } })` (or
 * DHVSDK_FAIL_AT=step:<name>) makes it fail before a named step: image, preallocate,
 * filesystem, loop-device, mount-point, mount, root-directory, grow-image, grow-filesystem.
 */
export async function createVolume(request: CreateRequest, ctx: HandlerContext): Promise<CreateResponse> {
  const layout = volumeLayout(request.volumesDir, request.volumeId);
  const params = parseParameters(request.parameters);
  const size = provisionedSize(request.capacityMinBytes, request.capacityMaxBytes);
  checkHostFor(params.fs, params.preallocate);
  // Before the volumes dir or the image folder is made: on a disk that is not mounted, a
  // new image would be made (and mkfs'd) on the filesystem below.
  const disk = await expectVolumesDisk(PLUGIN_NAME, layout.volumesDir, request.volumeId);
  const made = await ensureStateDir(layout);
  // A failed create is undone by the runtime, newest first, once this handler has thrown:
  // the lock is released after every other undo, and the empty folders go after that.
  ctx.undo('remove the image folder if empty', () => removeEmptyFolders(layout, made).catch(() => {}));
  const release = await acquireVolumeLock(layout.lockPath, { signal: ctx.signal, folderMode: 0o700 });
  ctx.undo('release the volume lock', release);
  const job: Job = {
    layout,
    params,
    fsGiven: request.parameters?.fs !== undefined,
    size,
    step: ctx.step,
    ctx,
  };
  let response: CreateResponse;
  try {
    response = await provision(job);
    await keepVolumesDisk(disk, ctx.log);
  } catch (err) {
    throw ctx.signal.aborted ? stopped(ctx.signal, err) : err;
  }
  await release();
  return response;
}

/** A create cut short by the deadline (or SIGTERM) says so, rather than "The operation was aborted". */
function stopped(signal: AbortSignal, err: unknown): PluginFailure {
  const why = signal.reason instanceof Error ? signal.reason.message : String(signal.reason);
  return new PluginFailure(
    'ESTOPPED',
    `create stopped (${why}) and undid what it had made; the step under way was: ${err instanceof Error ? err.message : String(err)}`,
  );
}

async function provision(job: Job): Promise<CreateResponse> {
  const { layout } = job;
  await expectDirectoryOrMissing(layout.mountPath, 'mount point');
  const existing = await imageSize(layout.imagePath);
  return existing === undefined ? createNew(job) : restore(job, existing);
}

async function createNew(job: Job): Promise<CreateResponse> {
  const { layout, params, size, step, ctx } = job;
  const signal = ctx.signal;
  const foreign = await mountsAt(layout.mountPath);
  if (foreign.length > 0) {
    throw new PluginFailure(
      'EMOUNTED',
      `${layout.mountPath} already has ${foreign.at(-1)!.source} mounted on it, but this volume has no image; unmount it and create again`,
      { path: layout.mountPath },
    );
  }
  // An image left by a create that was killed before its filesystem was made.
  await removeFile(layout.partialImagePath);
  await checkRoom(layout.stateDir, size, `the ${formatSize(size)} image of volume ${layout.mountPath}`);

  await step(
    'image',
    () => createSparseImage(layout.partialImagePath, size),
    async () => {
      await removeFile(layout.partialImagePath);
      await removeFile(layout.imagePath);
    },
  );
  if (params.preallocate) await step('preallocate', () => preallocate(layout.partialImagePath, 0n, size, { signal }));
  await step('filesystem', async () => {
    await makeFilesystem(params.fs, layout.partialImagePath, { signal });
    await rename(layout.partialImagePath, layout.imagePath);
  });
  const device = await step(
    'loop-device',
    () => attachLoopDevice(layout.imagePath, { signal }),
    (attached) => detachLoopDevice(attached),
  );

  await makeMountPoint(job);
  await mountVolume(
    job,
    device,
    params.mountOptions.filter((o) => o !== 'ro'),
  );

  // Mounted writable even when `ro` is asked for, so the root directory can be set; then remounted.
  await step('root-directory', async () => {
    await chmod(layout.mountPath, params.mode);
    if (params.uid !== undefined || params.gid !== undefined)
      await chown(layout.mountPath, params.uid ?? -1, params.gid ?? -1);
    if (params.mountOptions.includes('ro')) await remount(layout.mountPath, params.fs, params.mountOptions, { signal });
  });
  ctx.log(`created ${params.fs} volume ${layout.mountPath} (${formatSize(size)}) on ${device}`);
  return { path: layout.mountPath, bytes: size };
}

/** The image exists: the volume is mounted already, or is mounted again (after a reboot), then grown if asked. */
async function restore(job: Job, current: bigint): Promise<CreateResponse> {
  const { layout, params, size, step, ctx } = job;
  const signal = ctx.signal;
  const fs = await detectFilesystem(layout.imagePath);
  if (fs === undefined) {
    throw new PluginFailure(
      'EBADIMAGE',
      `the image ${layout.imagePath} holds no ext4 or xfs filesystem, so it was not mounted (it is never reformatted); delete the volume to start again`,
      { imagePath: layout.imagePath },
    );
  }
  if (job.fsGiven && fs !== params.fs) {
    throw new PluginFailure(
      'EFSCHANGED',
      `the volume already holds an ${fs} filesystem; fs cannot change to ${params.fs} (delete and create the volume instead)`,
    );
  }

  const mounted = await mountsAt(layout.mountPath);
  let device: string | undefined;
  if (mounted.length > 0) {
    const top = mounted.at(-1)!;
    device = await loopDeviceNumbered(top.device, layout.imagePath);
    if (device === undefined) {
      throw new PluginFailure(
        'EMOUNTED',
        `${layout.mountPath} has ${top.source} mounted on it, which is not this volume's image ${layout.imagePath}; unmount it and create again`,
        { path: layout.mountPath },
      );
    }
  } else {
    const attached = await loopDevicesBackedBy(layout.imagePath);
    if (attached.length > 0) {
      device = attached[0]!.device;
    } else {
      device = await step(
        'loop-device',
        () => attachLoopDevice(layout.imagePath, { signal }),
        (attached) => detachLoopDevice(attached),
      );
    }
    await checkFilesystem(fs, device, { signal });
    await makeMountPoint(job);
    await mountVolume({ ...job, params: { ...params, fs } }, device, params.mountOptions);
    ctx.log(`mounted ${layout.imagePath} again at ${layout.mountPath} on ${device}`);
  }

  const volume = {
    imagePath: layout.imagePath,
    mountPath: layout.mountPath,
    device,
    fs,
    mountOptions: params.mountOptions,
  };
  if (await finishInterruptedGrowth(volume, signal))
    ctx.log(`finished growing ${layout.mountPath} to ${formatSize(current)}`);
  if (size <= current) return { path: layout.mountPath, bytes: current };
  await expandVolume(
    { ...volume, stateDir: layout.stateDir, from: current, to: size, preallocate: params.preallocate },
    step,
    signal,
  );
  ctx.log(`grew ${layout.mountPath} from ${formatSize(current)} to ${formatSize(size)}`);
  return { path: layout.mountPath, bytes: size };
}

async function makeMountPoint({ layout, step }: Job): Promise<void> {
  await step(
    'mount-point',
    async () => {
      if ((await entryKind(layout.mountPath)) === 'missing') {
        await mkdir(layout.mountPath, { mode: 0o700 });
        return true;
      }
      if (!(await stat(layout.mountPath)).isDirectory())
        throw new PluginFailure('EUNSAFEPATH', `${layout.mountPath} is not a directory`, { path: layout.mountPath });
      return false;
    },
    (made) => (made ? rmdir(layout.mountPath) : undefined),
  );
}

async function mountVolume({ layout, params, step, ctx }: Job, device: string, options: string[]): Promise<void> {
  await step(
    'mount',
    () => mount(device, layout.mountPath, params.fs, options, { signal: ctx.signal }),
    () => unmount(layout.mountPath),
  );
}
