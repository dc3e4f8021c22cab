import { definePlugin } from '@dhv/sdk/plugin';
import { PLUGIN_NAME, PLUGIN_VERSION } from './version.js';

export { PLUGIN_NAME, PLUGIN_VERSION };

// The work lives in modules loaded on demand: fingerprint (1 s, no root) loads none of it.
export default definePlugin({
  name: PLUGIN_NAME,
  version: PLUGIN_VERSION,
  create: async (request, ctx) => (await import('./create-volume.js')).createVolume(request, ctx),
  delete: async (request, ctx) => (await import('./delete-volume.js')).deleteVolume(request, ctx),
});
