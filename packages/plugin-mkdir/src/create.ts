import type { Stats } from 'node:fs';
import { dirname } from 'node:path';
import {
  fsCalls,
  PluginFailure,
  volumePath,
  type CreateRequest,
  type CreateResponse,
  type HandlerContext,
} from '@dhv/sdk/plugin';
import { freeSpace, provisionedBytes, reportedBytes } from './capacity.js';
import { describeType, errnoOf, lstatIfExists, openDirectoryNoFollow } from './fs-safe.js';
import { withVolumePathLock } from './lock.js';
import { formatMode, parseMkdirParameters, type MkdirParameters } from './parameters.js';
import { inspectVolumesDir, makeVolumesDir } from './volumes-dir.js';

const { mkdir, rmdir } = fsCalls;

/**
 * create: `<volumes dir>/<volume id>` as a directory with the requested mode and owner.
 * It is also the restore call the agent makes for every volume after each restart, so a
 * directory that is already there is success and is left exactly as it is.
 */
export async function createVolume(request: CreateRequest, ctx: HandlerContext): Promise<CreateResponse> {
  // Everything that can be refused is refused before the disk is touched: the ID and
  // paths, the parameters, the volumes dir, and (for a new volume) capacity_min.
  const path = volumePath(request.volumesDir, request.volumeId);
  const wanted = parseMkdirParameters(request.parameters);
  const volumesDir = dirname(path);
  const volumesDirState = await inspectVolumesDir(volumesDir);
  // free space of the volumes dir, or of its parent when it is still to be made
  const newVolumeBytes = (await lstatIfExists(path))
    ? undefined
    : provisionedBytes(await freeSpace(volumesDir), request, volumesDir);
  if (volumesDirState === 'missing') await makeVolumesDir(volumesDir);
  return withVolumePathLock(path, ctx.signal, async () => {
    const existing = await lstatIfExists(path);
    if (existing) return useExisting(path, existing, request, ctx);
    const bytes = newVolumeBytes ?? provisionedBytes(await freeSpace(volumesDir), request, volumesDir);
    ctx.signal.throwIfAborted();
    try {
      await mkdir(path, { mode: 0o700 });
    } catch (err) {
      if (errnoOf(err) !== 'EEXIST')
        throw failure('EMKDIR', `could not create ${path}: ${(err as Error).message}`, path);
      // Made by something that does not take our lock; judge it like any existing path.
      const raced = await lstatIfExists(path);
      if (raced) return useExisting(path, raced, request, ctx);
      throw failure(
        'EMKDIR',
        `could not create ${path}: it appeared and vanished while this create ran; try again`,
        path,
      );
    }
    await applyOwnerAndMode(path, wanted);
    ctx.log(`created ${path} (mode ${formatMode(wanted.mode)}${ownerText(wanted)})`);
    return { path, bytes };
  });
}

/**
 * An existing directory is a healthy volume: no chmod, no chown, no capacity_min check
 * (its own files already use part of the filesystem), even when the request asks for
 * another mode or owner. An operator who changed them on purpose keeps the change.
 */
async function useExisting(
  path: string,
  stats: Stats,
  request: CreateRequest,
  ctx: HandlerContext,
): Promise<CreateResponse> {
  if (stats.isSymbolicLink()) {
    throw failure(
      'ESYMLINK',
      `${path} is a symbolic link; dhv-mkdir never uses a link as a volume (a chmod or chown would reach its target). ` +
        `Remove the link, or delete the volume, which removes only the link`,
      path,
    );
  }
  if (!stats.isDirectory()) {
    throw failure(
      'ENOTDIR',
      `${path} exists and is ${describeType(stats)}, not a directory; move it away and create the volume again`,
      path,
    );
  }
  const free = await freeSpace(path);
  if (free < request.capacityMinBytes) {
    ctx.log(
      `${path} already exists; its filesystem has ${free} bytes free, less than capacity_min (${request.capacityMinBytes}); reporting it as it is`,
    );
  }
  return { path, bytes: reportedBytes(free, request) };
}

/**
 * chown before chmod: a chown may clear setuid and setgid bits, and the mode must end up
 * exactly as asked. Both go through a handle opened without following links. Whatever
 * fails, the directory just made is removed again, so a failed create leaves nothing.
 */
async function applyOwnerAndMode(path: string, wanted: MkdirParameters): Promise<void> {
  let step = 'open';
  try {
    const handle = await openDirectoryNoFollow(path);
    try {
      if (wanted.uid !== undefined || wanted.gid !== undefined) {
        step = 'chown';
        await handle.chown(wanted.uid ?? -1, wanted.gid ?? -1);
      }
      step = 'chmod';
      await handle.chmod(wanted.mode);
      const applied = (await handle.stat()).mode & 0o7777;
      if (applied !== wanted.mode) {
        throw new Error(`the filesystem kept mode ${formatMode(applied)} instead of ${formatMode(wanted.mode)}`);
      }
    } finally {
      await handle.close();
    }
  } catch (err) {
    const removed = await rmdir(path).then(
      () => 'the directory was removed again',
      (rmErr: Error) => `removing the directory again failed too (${rmErr.message}); remove ${path} by hand`,
    );
    const what =
      step === 'chown'
        ? `change the owner of ${path} to${ownerText(wanted)}`
        : step === 'chmod'
          ? `set mode ${formatMode(wanted.mode)} on ${path}`
          : `open ${path}`;
    const code = step === 'chown' ? 'ECHOWN' : step === 'chmod' ? 'ECHMOD' : 'EMKDIR';
    throw failure(code, `could not ${what}: ${(err as Error).message}; ${removed}`, path);
  }
}

function ownerText({ uid, gid }: MkdirParameters): string {
  return `${uid !== undefined ? ` uid ${uid}` : ''}${gid !== undefined ? ` gid ${gid}` : ''}`;
}

function failure(code: string, message: string, path: string): PluginFailure {
  return new PluginFailure(code, message, { path });
}
