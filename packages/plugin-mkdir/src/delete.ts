import { rm, stat, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import {
  expectCreatedPath,
  PluginFailure,
  volumePath,
  type DeleteHandlerRequest,
  type HandlerContext,
} from '@dhv/sdk/plugin';
import { forgetVolumesDisk } from '@dhv/sdk/host';
import { errnoOf, lstatIfExists } from './fs-safe.js';
import { lockFileFor, removeLeftStaging, stagingPathFor, withVolumePathLock } from './lock.js';
import { mountPointsWithin } from './mounts.js';
import { PLUGIN_NAME } from './version.js';

/**
 * delete: removes `<volumes dir>/<volume id>` and everything in it. Deleting what is not
 * there is success (the agent never retries, and may delete a volume twice). A link at
 * the volume path is removed itself, never followed. The path comes from the volume ID,
 * never from DHV_CREATED_PATH alone: on the agent's cleanup delete that is the volumes
 * dir itself (the runtime then gives `cleanup` and no created path), and only this
 * volume may go.
 */
export async function deleteVolume(request: DeleteHandlerRequest, ctx: HandlerContext): Promise<void> {
  const path = volumePath(request.volumesDir, request.volumeId);
  expectCreatedPath(request.createdPath, path);
  await removeVolume(path, ctx);
  await forgetVolumesDisk(PLUGIN_NAME, dirname(path), request.volumeId);
}

async function removeVolume(path: string, ctx: HandlerContext): Promise<void> {
  const volumesDir = await stat(dirname(path)).catch((err: unknown) => {
    if (errnoOf(err) === 'ENOENT' || errnoOf(err) === 'ENOTDIR') return undefined;
    throw err;
  });
  if (!volumesDir?.isDirectory()) return; // no volumes dir, so no volume in it
  // No volume, nothing half-built and no lock file to clear: gone at this instant, so
  // done without the lock. A create that gets further later makes the volume after it.
  const staging = stagingPathFor(path);
  const leftovers = [path, staging, lockFileFor(path)];
  if ((await Promise.all(leftovers.map(lstatIfExists))).every((found) => !found)) return;
  await withVolumePathLock(path, ctx.signal, async () => {
    await removeLeftStaging(staging);
    const stats = await lstatIfExists(path);
    if (!stats) return;
    if (!stats.isDirectory()) {
      await unlink(path);
      ctx.log(`removed ${stats.isSymbolicLink() ? 'the symbolic link' : 'the file'} ${path}`);
      return;
    }
    const mounted = await mountPointsWithin(path);
    if (mounted.length > 0) {
      throw new PluginFailure(
        'EMOUNTED',
        `refusing to delete ${path}: ${mounted.join(', ')} ${mounted.length === 1 ? 'is a mount point' : 'are mount points'} inside it, ` +
          `and removing it would erase that filesystem's files; unmount ${mounted.length === 1 ? 'it' : 'them'} and delete again`,
        { path, mountPoints: mounted },
      );
    }
    ctx.signal.throwIfAborted();
    // rm never follows links inside the tree: it removes the links themselves.
    await rm(path, { recursive: true, force: true }).catch((err: Error) => {
      throw new PluginFailure(
        'EDELETE',
        `could not remove all of ${path}: ${err.message}; what was not removed is still there. Fix the cause (an immutable or busy file?) and delete again`,
        { path },
      );
    });
    ctx.log(`removed ${path}`);
  });
}
