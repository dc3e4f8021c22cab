import { basename } from 'node:path';
import { PluginFailure, definePlugin } from '@dhv/sdk/plugin';
import { PLUGIN_VERSION } from '../plugin.js';
import { createVolume } from '../create-volume.js';
import { deleteVolume } from '../delete-volume.js';

/**
 * For tests only, never shipped: the plugin, failing its create right after the step
 * named in its own file name (`...-fail-after-mount` fails after mounting). The shipped
 * plugin has no such seam; this one is bundled from here into a test's temp dir.
 */
const failAfter = /-fail-after-([a-z-]+)$/.exec(basename(process.argv[1] ?? ''))?.[1];

export default definePlugin({
  name: 'dhv-loopback-fault-injecting',
  version: PLUGIN_VERSION,
  create: (request, ctx) =>
    createVolume(request, ctx, {
      afterStep: (step) => {
        if (step === failAfter) throw new PluginFailure('EINJECTED', `injected failure after step ${step}`);
      },
    }),
  delete: deleteVolume,
});
