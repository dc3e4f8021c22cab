import { definePlugin } from '@dhv/sdk/plugin';
import { PLUGIN_NAME, PLUGIN_VERSION } from './version.js';

/**
 * dhv-mkdir: a Nomad dynamic host volume that is a plain directory, with real capacity.
 * The work lives in modules loaded on demand, so fingerprint loads none of it.
 */
export default definePlugin({
  name: PLUGIN_NAME,
  version: PLUGIN_VERSION,
  create: async (request, ctx) => (await import('./create.js')).createVolume(request, ctx),
  delete: async (request, ctx) => (await import('./delete.js')).deleteVolume(request, ctx),
});
