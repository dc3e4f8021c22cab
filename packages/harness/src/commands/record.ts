import { Args, Flags } from '@oclif/core';
import { installRecorder, recordPaths, removeRecorder } from '../record/install-recorder.js';
import { recordText, removeText } from '../presenters/format-record.js';
import { DhvCommand } from './dhv-command.js';
import { nomadSpelling } from './volume/nomad-flags.js';

export default class RecordCommand extends DhvCommand {
  static override summary =
    "Put a recorder in front of a plugin in a Nomad client's plugin dir, and take it away with --remove.";
  static override description =
    'The recorder runs the plugin for the agent and hands back exactly what it answered (stdout and stderr byte for byte, its exit status or the signal it died of), ' +
    'forwarding signals to it; it appends each call as one JSON line (plugin, argv, env, exit, stdout, stderr, start, duration_ms) to the log, ' +
    'and a log it cannot write never fails the call. The plugin is kept, the same file, in <plugin dir>/.dhv-record/<id>/ (a folder, which the agent skips); ' +
    '--remove puts it back by one rename, and refuses when what is there is not what dhv record left. ' +
    'The recorder is a small script run by the node that runs this dhv (#!' +
    '<node>): record again after moving node. Replay a log against another build with `dhv replay`.';
  static override examples = [
    '<%= config.bin %> record dhv-mkdir --plugin-dir /opt/nomad/data/host_volume_plugins',
    '<%= config.bin %> record /opt/nomad/data/host_volume_plugins/dhv-mkdir --log /var/log/dhv-mkdir.calls.jsonl',
    '<%= config.bin %> record --remove /opt/nomad/data/host_volume_plugins/dhv-mkdir',
  ];
  static override args = {
    plugin: Args.string({ description: 'The plugin: its path, or its ID in --plugin-dir', required: true }),
  };
  static override flags = {
    'plugin-dir': Flags.string({
      description: "The client's host_volume_plugin_dir, for a plugin given by ID",
    }),
    log: Flags.string({
      description: 'Where the calls are appended. Default: <plugin dir>/.dhv-record/<id>/calls.jsonl',
      exclusive: ['remove'],
    }),
    remove: Flags.boolean({
      description: 'Take the recorder away and put the plugin back exactly as it was; the log stays',
      default: false,
    }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(
      RecordCommand,
      nomadSpelling(this.argv, { json: true, ...RecordCommand.flags }),
    );
    const paths = recordPaths(args.plugin, flags['plugin-dir']);
    if (flags.remove) {
      const result = await removeRecorder(paths);
      if (this.jsonOutput) return this.printJson(result);
      return this.print(removeText(result));
    }
    const result = await installRecorder(paths, { log: flags.log, node: process.execPath });
    if (this.jsonOutput) return this.printJson(result);
    if (!result.pluginDiesWithRecorder)
      this.warnLine(
        'no setpriv(1) with --pdeathsig here (apt-get install util-linux): a recorder killed alone (Nomad kills only the plugin it started, at its deadline) leaves the plugin running',
      );
    this.print(recordText(result, this.config.bin));
  }
}
