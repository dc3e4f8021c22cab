import { Args, Flags } from '@oclif/core';
import { EXIT_CODES } from '../errors/exit-codes.js';
import { COMPARED_FIELDS, replayTrace, type CallDifference } from '../record/replay.js';
import { replayText } from '../presenters/format-record.js';
import { DhvCommand, stopOnSignals } from './dhv-command.js';
import { nomadSpelling } from './volume/nomad-flags.js';

export default class Replay extends DhvCommand {
  static override summary =
    'Replay recorded plugin calls against another build of the plugin, and report every answer that differs.';
  static override description =
    'Each call of the trace (the JSON lines `dhv record` writes, or a real-agent scenario file with steps[].plugin_calls) runs in order, ' +
    'with the recorded argv and environment, in a sandbox: the recorded volumes and plugin dirs become fresh folders (mapped back in the answers), volume IDs are kept. ' +
    'A call differs when its exit status, stdout or stderr bytes, or what the agent reads from them (version, path, bytes, error line) differ. ' +
    'The sandbox is removed on every way out, mounts and loop devices a plugin left in it included. ' +
    'Exit status: 0 every call answered the same, 1 at least one differs (or the replay could not run), 2 a usage mistake or a trace that does not parse.';
  static override examples = [
    '<%= config.bin %> replay /opt/nomad/data/host_volume_plugins/.dhv-record/dhv-mkdir/calls.jsonl ./dist/dhv-mkdir',
    '<%= config.bin %> replay calls.jsonl ./dhv-mkdir-2.0.0 -json',
    '<%= config.bin %> replay 01-seed-flow-mkdir.json ./dist/dhv-mkdir --id dhv-mkdir',
  ];
  static override args = {
    trace: Args.string({
      description: 'The recorded calls: a dhv record log, or a real-agent scenario file',
      required: true,
    }),
    plugin: Args.string({ description: 'The plugin build to replay them against (a path)', required: true }),
  };
  static override flags = {
    id: Flags.string({
      description:
        "The trace's plugin to replay. Default: the trace's only plugin, else the one named like <plugin>'s file",
    }),
    ignore: Flags.string({
      description:
        'A field not to compare (repeatable): stderr (what the agent only logs); stdout and bytes for a plugin that answers the free space',
      options: [...COMPARED_FIELDS],
      multiple: true,
      multipleNonGreedy: true,
    }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(Replay, nomadSpelling(this.argv, { json: true, ...Replay.flags }));
    const controller = new AbortController();
    const replay = replayTrace({
      trace: args.trace,
      plugin: args.plugin,
      pluginId: flags.id,
      ignore: flags.ignore as CallDifference['field'][] | undefined,
      signal: controller.signal,
    });
    // Stopped: the running call's process group is killed and the sandbox removed before dhv exits.
    stopOnSignals(async () => {
      controller.abort();
      await replay.catch(() => undefined);
    });
    const report = await replay;
    if (this.jsonOutput) this.printJson(report);
    else this.print(replayText(report));
    if (report.differ > 0) this.exit(EXIT_CODES.failed);
  }
}
