import { chmod, lstat, mkdir, rm } from 'node:fs/promises';
import {
  definePlugin,
  diskSpace,
  expectCreatedPath,
  formatSize,
  param,
  parameterSchema,
  PluginFailure,
  volumePath,
} from '@dhv/sdk/plugin';

/**
 * {{pluginId}}: each volume is a directory, `<volumes dir>/<volume id>`, with the mode
 * the spec asks for, and reports the space its filesystem really has.
 *
 * The agent runs this file as `{{pluginId}} fingerprint|create|delete` with only DHV_*
 * variables in its environment (no PATH, no HOME). console.log goes to stderr.
 */

/**
 * The spec's `parameters { mode = "0750" }`, read as Nomad's own mkdir reads it (default
 * 0700); the runtime refuses any other key, or a mode that is not octal, before create runs.
 */
const PARAMETERS = parameterSchema({ mode: param.mkdirMode() });

const GiB = 1024n ** 3n;

/**
 * The free space, rounded down to whole GiB so that repeated creates (and restores)
 * report the same capacity while other writers change the free space by a few blocks;
 * never below capacity_min (create already checked it is free), never above capacity_max.
 */
function reportedCapacity(free: bigint, min: bigint, max: bigint): bigint {
  let bytes = (free / GiB) * GiB;
  if (bytes < min) bytes = min;
  if (max > 0n && bytes > max) bytes = max;
  return bytes;
}

export default definePlugin({
  name: '{{pluginId}}',
  version: '0.1.0',

  parameters: PARAMETERS,

  // Also the restore call after every agent restart: an existing volume is success,
  // left as it is (but an update that changed the mode applies it).
  async create(request, ctx) {
    const { mode } = PARAMETERS.read(request.parameters);
    const path = volumePath(request.volumesDir, request.volumeId);

    const existing = await lstat(path).catch(() => undefined);
    if (existing?.isSymbolicLink()) {
      throw new PluginFailure('EUNSAFEPATH', `${path} is a symbolic link; refusing to use it as a volume`);
    }
    if (existing && !existing.isDirectory()) {
      throw new PluginFailure('EEXIST', `${path} exists and is not a directory`);
    }

    const { free } = await diskSpace(request.volumesDir);
    if (free < request.capacityMinBytes) {
      throw new PluginFailure(
        'ENOSPACE',
        `the volumes dir has ${formatSize(free)} free, less than capacity_min ${formatSize(request.capacityMinBytes)}`,
      );
    }

    if (!existing) {
      // Nomad never creates host_volumes_dir: on a fresh node the first create meets it missing.
      await mkdir(request.volumesDir, { recursive: true, mode: 0o711 });
      // Another create of this volume may be running at the same moment: the one whose
      // mkdir wins sets the mode, the others find a directory and succeed too.
      const made = await mkdir(path, { mode }).then(
        () => true,
        (err: NodeJS.ErrnoException) => {
          if (err.code === 'EEXIST') return false;
          throw err;
        },
      );
      // mkdir's mode is filtered by the umask; chmod applies it exactly.
      if (made) await chmod(path, mode);
    } else if (ctx.changedParameters?.includes('mode')) {
      await chmod(path, mode);
    }
    return { path, bytes: reportedCapacity(free, request.capacityMinBytes, request.capacityMaxBytes) };
  },

  // Removes the directory; a volume that is already gone is success.
  async delete(request) {
    // Found from the ID, never from createdPath alone: on the agent's cleanup delete
    // (request.cleanup) createdPath was the volumes dir, which holds every other volume.
    const path = volumePath(request.volumesDir, request.volumeId);
    expectCreatedPath(request.createdPath, path);
    // rm never follows a symbolic link: a link at the path is removed, not its target.
    await rm(path, { recursive: true, force: true });
  },
});
