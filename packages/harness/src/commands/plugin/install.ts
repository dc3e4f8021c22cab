import { resolve } from 'node:path';
import { Args } from '@oclif/core';
import { installReferencePlugin, isReferencePluginId, REFERENCE_PLUGINS } from '../../demo/reference-plugins.js';
import { UsageError } from '../../errors/dhv-error.js';
import { dhvDocument } from '../../presenters/dhv-document.js';
import { DhvCommand, agentFlags } from '../dhv-command.js';

export default class PluginInstall extends DhvCommand {
  static override summary = 'Copy a reference plugin (dhv-mkdir, dhv-loopback) into a plugin dir.';
  static override description =
    "Writes <dir>/<plugin>, mode 0755 (default dir: the agent's plugin dir, as --plugin-dir, --config and --data-dir say). " +
    'The same file already there is left as it is; a different file of that name is never replaced. ' +
    'A running Nomad agent publishes the plugin after a reload or restart; dhv agent fingerprint does it for the simulated one.';
  static override examples = [
    '<%= config.bin %> plugin install dhv-mkdir /opt/nomad/data/host_volume_plugins',
    '<%= config.bin %> plugin install dhv-loopback --plugin-dir ./plugins',
  ];
  static override args = {
    plugin: Args.string({ description: Object.keys(REFERENCE_PLUGINS).join(' or '), required: true }),
    dir: Args.string({ description: "the plugin dir (host_volume_plugin_dir). Default: the agent's", required: false }),
  };
  static override flags = { ...agentFlags };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(PluginInstall);
    if (!isReferencePluginId(args.plugin))
      throw new UsageError(
        `${args.plugin} is not a reference plugin; dhv brings ${Object.keys(REFERENCE_PLUGINS).join(' and ')} (dhv plugin list)`,
      );
    const dir = args.dir === undefined ? (await this.agentConfig(flags)).pluginDir : resolve(args.dir);
    const done = await installReferencePlugin(args.plugin, dir);
    if (this.jsonOutput) return this.printJson(dhvDocument('ReferencePluginInstall', { plugin: args.plugin, ...done }));
    this.print(
      done.installed
        ? `Installed ${args.plugin} as ${done.path}\nA Nomad agent publishes it after a reload or restart (dhv agent fingerprint, for the simulated one).`
        : `${done.path} is already this dhv's ${args.plugin}; nothing to do.`,
    );
  }
}
