import { mkdir, rm } from 'node:fs/promises';
import { definePlugin, expectCreatedPath, volumePath } from '@dhv/sdk/plugin';

/**
 * {{pluginId}}: a Nomad dynamic host volume plugin.
 *
 * The agent runs this file as `{{pluginId}} fingerprint|create|delete` with an
 * environment that holds only DHV_* variables (no PATH, no HOME). The SDK reads and
 * checks that environment, hands you a typed request, and writes the one JSON
 * document the agent reads from stdout. console.log goes to stderr, never stdout.
 */
export default definePlugin({
  name: '{{pluginId}}',
  version: '0.1.0',

  // Called for `volume create`, for a repeated create with the same ID, and for
  // every volume each time the agent starts. It must be idempotent: an existing,
  // healthy volume is success, left as it is.
  async create(request) {
    // <volumes dir>/<volume id>, refused when the ID is not a UUID.
    const path = volumePath(request.volumesDir, request.volumeId);
    await mkdir(path, { recursive: true, mode: 0o700 });
    // `bytes` is the capacity you actually provisioned; 0 when you do not manage size.
    return { path, bytes: 0 };
  },

  // Must remove what create made, and succeed when it is already gone.
  async delete(request) {
    // Found from the ID, never from createdPath alone: on the agent's cleanup delete
    // (request.cleanup) createdPath was the volumes dir, which holds every other volume.
    const path = volumePath(request.volumesDir, request.volumeId);
    expectCreatedPath(request.createdPath, path);
    await rm(path, { recursive: true, force: true });
  },
});
