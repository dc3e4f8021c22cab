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
import { expectVolumesDisk, keepVolumesDisk } from '@dhv/sdk/host';
import { freeSpace, provisionedBytes, reportedBytes } from './capacity.js';
import { describeType, errnoOf, lstatIfExists, openDirectoryNoFollow } from './fs-safe.js';
import { removeLeftStaging, stagingPathFor, withVolumePathLock } from './lock.js';
import { formatMode, parseMkdirParameters, type MkdirParameters } from './parameters.js';
import { inspectVolumesDir, makeVolumesDir } from './volumes-dir.js';
import { PLUGIN_NAME } from './version.js';

const { mkdir, rename, rmdir } = fsCalls;

/**
 * create: `<volumes dir>/<volume id>` as a directory with the requested mode and owner.
 * It is also the restore call the agent makes for every volume after each restart, so a
 * directory that is already there is success and is left exactly as it is.
 */
export async function createVolume(request: CreateRequest, ctx: HandlerContext): Promise<CreateResponse> {
  // Everything that can be refused is refused before the disk is touched: the ID and
  // paths, the parameters, the disk the volumes dir is on, the volumes dir, and (for a
  // new volume) capacity_min.
  const path = volumePath(request.volumesDir, request.volumeId);
  const wanted = parseMkdirParameters(request.parameters);
  const volumesDir = dirname(path);
  const disk = await expectVolumesDisk(PLUGIN_NAME, volumesDir, request.volumeId);
  const response = await createOnDisk(path, volumesDir, wanted, request, ctx);
  await keepVolumesDisk(disk, ctx.log);
  return response;
}

async function createOnDisk(
  path: string,
  volumesDir: string,
  wanted: MkdirParameters,
  request: CreateRequest,
  ctx: HandlerContext,
): Promise<CreateResponse> {
  const volumesDirState = await inspectVolumesDir(volumesDir);
  // No lock for what is already there (the restore after every agent restart): a
  // directory at the volume path is always a whole volume, since a new one is made under
  // another name and renamed into place. One being deleted meanwhile counts as deleted
  // after this create.
  const found = await lstatIfExists(path);
  if (found) return useExisting(path, found, request, ctx);
  // free space of the volumes dir, or of its parent when it is still to be made
  const bytes = provisionedBytes(await freeSpace(volumesDir), request, volumesDir);
  if (volumesDirState === 'missing') await makeVolumesDir(volumesDir);
  return withVolumePathLock(path, ctx.signal, async () => {
    const existing = await lstatIfExists(path);
    if (existing) return useExisting(path, existing, request, ctx);
    ctx.signal.throwIfAborted();
    const staging = stagingPathFor(path);
    await removeLeftStaging(staging);
    try {
      await mkdir(staging, { mode: 0o700 });
    } catch (err) {
      throw failure('EMKDIR', `could not create ${path}: ${(err as Error).message}`, path);
    }
    await applyOwnerAndMode(staging, path, wanted);
    const raced = await publish(staging, path);
    if (raced) return useExisting(path, raced, request, ctx);
    ctx.log(`created ${path} (mode ${formatMode(wanted.mode)}${ownerText(wanted)})`);
    return { path, bytes };
  });
}

/**
 * Renames the finished directory to the volume path. Returns what is there instead when
 * something that does not take this lock made the path first (the staging directory is
 * then removed); an empty directory made there in the instant between the check and the
 * rename is replaced, since rename(2) cannot be told not to.
 */
async function publish(staging: string, path: string): Promise<Stats | undefined> {
  const before = await lstatIfExists(path);
  if (!before) {
    try {
      await rename(staging, path);
      return undefined;
    } catch (err) {
      const code = errnoOf(err);
      if (code !== 'EEXIST' && code !== 'ENOTEMPTY' && code !== 'ENOTDIR' && code !== 'EISDIR') {
        await rmdir(staging).catch(() => {});
        throw failure('EMKDIR', `could not create ${path}: ${(err as Error).message}`, path);
      }
    }
  }
  await rmdir(staging).catch(() => {});
  const raced = before ?? (await lstatIfExists(path));
  if (raced) return raced;
  throw failure('EMKDIR', `could not create ${path}: it appeared and vanished while this create ran; try again`, path);
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
 * exactly as asked. Both go through a handle on `dir` (the volume-to-be, not yet at
 * `path`) opened without following links. Whatever fails, `dir` is removed again, so a
 * failed create leaves nothing.
 */
async function applyOwnerAndMode(dir: string, path: string, wanted: MkdirParameters): Promise<void> {
  let step = 'open';
  try {
    const handle = await openDirectoryNoFollow(dir);
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
    const removed = await rmdir(dir).then(
      () => 'the directory was removed again',
      (rmErr: Error) => `removing the directory again failed too (${rmErr.message}); remove ${dir} by hand`,
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
