import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { Args, Flags } from '@oclif/core';
import { parseByteSize } from '@dhv/sdk';
import { pluginTrustWarnings } from '@dhv/sdk/client';
import { CleanupJournal } from '@dhv/sdk/host';
import { runPluginOnce } from '../../agent/run-plugin-once.js';
import { Agent } from '../../agent/agent.js';
import { UsageError } from '../../errors/dhv-error.js';
import { parseParameterPairs } from '../../conformance/settings.js';
import { DhvCommand, agentFlags, interruptions } from '../dhv-command.js';
import { journalProcessGroups } from '../../runner/process-runner.js';
import { pluginRunJson, pluginRunText } from '../../presenters/format-plugin-run.js';
import { withSpinner } from '../../presenters/spinner.js';
import { dhvDocument } from '../../presenters/dhv-document.js';

export default class PluginRun extends DhvCommand {
  static override summary = 'Run one plugin operation exactly as a Nomad agent would, and show the decoded result.';
  static override description =
    "The plugin gets only the DHV_* variables the agent sends for the operation, the agent's timeout (1 s fingerprint, 60 s create/delete), and its stdout is decoded as Go decodes it. " +
    '<plugin> is a path to an executable, or a plugin ID in the plugin dir (mkdir is the built-in). An operation outside the protocol is run raw, to see how the plugin answers it.';
  static override examples = [
    '<%= config.bin %> plugin run ./dist/dhv-mkdir fingerprint',
    '<%= config.bin %> plugin run dhv-loopback create --name data --capacity-min 47MiB --param fs=ext4',
    '<%= config.bin %> plugin run ./my-plugin delete --volume-id 1e1d4540-14f9-2515-8502-24d46291717d --created-path /srv/volumes/1e1d4540-14f9-2515-8502-24d46291717d --json',
  ];
  static override args = {
    plugin: Args.string({ description: 'Path to a plugin executable, or a plugin ID in --plugin-dir', required: true }),
    operation: Args.string({ description: 'fingerprint, create or delete (anything else is run raw)', required: true }),
  };
  static override flags = {
    ...agentFlags,
    'volume-id': Flags.string({ description: 'DHV_VOLUME_ID (a UUID). Default: a new random one' }),
    name: Flags.string({ description: 'DHV_VOLUME_NAME. Default: dhv-plugin-run' }),
    namespace: Flags.string({ description: 'DHV_NAMESPACE. Default: default' }),
    'capacity-min': Flags.string({
      description: 'DHV_CAPACITY_MIN_BYTES, as a human size (50MB, 47MiB, 1GiB) or bytes',
    }),
    'capacity-max': Flags.string({ description: 'DHV_CAPACITY_MAX_BYTES, as a human size or bytes' }),
    param: Flags.string({
      description: 'A DHV_PARAMETERS entry, key=value (repeatable)',
      multiple: true,
      multipleNonGreedy: true,
    }),
    'created-path': Flags.string({ description: 'DHV_CREATED_PATH for delete: the path create returned' }),
    'node-id': Flags.string({ description: "DHV_NODE_ID. Default: the simulated node's ID from the data dir" }),
    timeout: Flags.string({
      description: "Deadline, like 500ms, 5s or 2m. Default: the agent's (1s fingerprint, 60s create/delete)",
    }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(PluginRun);
    // A mistake in a flag is said alone, before the data dir's line.
    const request = {
      volumeId: flags['volume-id'],
      name: flags.name,
      namespace: flags.namespace,
      capacityMinBytes: size('--capacity-min', flags['capacity-min']),
      capacityMaxBytes: size('--capacity-max', flags['capacity-max']),
      parameters: parseParameterPairs(flags.param),
      createdPath: flags['created-path'],
      timeoutMs: duration(flags.timeout),
    };
    const config = await this.agentConfig(flags);
    // The plugin's process group is journalled: a signal kills it (a second one, or kill -9
    // and the next dhv command, whatever is left of it) before dhv exits.
    journalProcessGroups();
    const controller = new AbortController();
    const hurry = new AbortController();
    hurry.signal.addEventListener('abort', () => CleanupJournal.forThisProcess().killProcessGroups());
    const signals = interruptions(controller, hurry, (line) => this.warnLine(line));
    const outcome = await withSpinner(
      `Running ${args.plugin} ${args.operation}`,
      runPluginOnce({
        plugin: args.plugin,
        operation: args.operation,
        pluginDir: pluginDirFor(
          args.plugin,
          flags['plugin-dir'] !== undefined || flags.config !== undefined,
          config.pluginDir,
        ),
        // Nomad's client never makes host_volumes_dir (only the built-in mkdir makes it, as a parent of
        // its volume): a plugin run here finds it missing where it would under a real agent.
        volumesDir: config.volumesDir,
        nodePool: config.nodePool,
        nodeId: flags['node-id'] ?? (await Agent.open(config)).nodeId,
        ...request,
        signal: controller.signal,
      }),
    );
    const interrupted = signals.exitCode();
    if (interrupted !== undefined) this.exit(interrupted);
    if (!outcome.ok) {
      if (args.operation === 'create' && !existsSync(config.volumesDir))
        this.warnLine(
          `the volumes dir ${config.volumesDir} does not exist: Nomad's client never makes it, so a plugin makes it on first use (dhv check's create.volumes-dir-missing)`,
        );
      throw outcome.error;
    }
    if (!outcome.builtin) outcome.warnings.push(...(await pluginTrustWarnings(outcome.executable)));
    if (this.jsonOutput) return this.printJson(dhvDocument('PluginRun', pluginRunJson(outcome)));
    for (const warning of outcome.warnings) this.warnLine(warning);
    this.print(pluginRunText(outcome));
  }
}

/**
 * DHV_PLUGIN_DIR as an agent would set it for this plugin: a plugin given by its path
 * lives in its own folder, unless a plugin dir was configured, which is passed as given.
 */
export function pluginDirFor(plugin: string, configured: boolean, pluginDir: string): string {
  if (configured || !plugin.includes('/')) return pluginDir;
  return dirname(resolve(plugin));
}

function size(flag: string, value: string | undefined): bigint | undefined {
  if (value === undefined) return undefined;
  try {
    return parseByteSize(value);
  } catch (err) {
    throw new UsageError(`${flag}: ${(err as Error).message}`);
  }
}

function duration(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const m = /^([0-9]+(?:\.[0-9]+)?)(ms|s|m)$/.exec(value.trim());
  if (!m) throw new UsageError(`--timeout ${JSON.stringify(value)}: expected a duration like 500ms, 5s or 2m`);
  return Math.round(Number(m[1]) * { ms: 1, s: 1000, m: 60_000 }[m[2] as 'ms' | 's' | 'm']);
}
