import { definePlugin } from '@dhv/sdk/plugin';

export const PLUGIN_NAME = 'dhv-loopback';
export const PLUGIN_VERSION = '0.1.0';

// The work lives in modules loaded on demand: fingerprint (1 s, no root) loads none of it.
export default definePlugin({
  name: PLUGIN_NAME,
  version: PLUGIN_VERSION,
  create: async (request, ctx) => (await import('./create-volume.js')).createVolume(request, ctx),
  delete: async (request, ctx) => (await import('./delete-volume.js')).deleteVolume(request, ctx),
});
