import { definePlugin } from '@dhv/sdk/plugin';
import { createVolume } from './create.js';
import { deleteVolume } from './delete.js';
import { PLUGIN_NAME, PLUGIN_VERSION } from './version.js';

/** dhv-mkdir: a Nomad dynamic host volume that is a plain directory, with real capacity. */
export default definePlugin({
  name: PLUGIN_NAME,
  version: PLUGIN_VERSION,
  create: createVolume,
  delete: deleteVolume,
});
