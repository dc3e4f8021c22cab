import { Command, Flags, type Interfaces } from '@oclif/core';
import { Agent } from '../agent/agent.js';
import { loadAgentConfig, type AgentConfig } from '../config/agent-config.js';
import { errorJson, describeError } from '../presenters/format-error.js';
import { toJson } from '../presenters/json.js';

/**
 * What every `dhv` command shares: `--json`, errors printed to stderr with exit code 1
 * (as JSON with `--json`), and warnings on stderr.
 */
export abstract class DhvCommand extends Command {
  static override baseFlags = {
    json: Flags.boolean({ description: 'Print machine-readable JSON instead of text.', default: false }),
  };

  protected jsonOutput = false;

  protected print(text: string): void {
    process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  }

  protected printJson(value: unknown): void {
    process.stdout.write(`${toJson(value)}\n`);
  }

  protected warnLine(message: string): void {
    if (!this.jsonOutput) process.stderr.write(`warning: ${message}\n`);
  }

  protected override async catch(err: Interfaces.CommandError): Promise<never> {
    // oclif's own errors (usage mistakes, exits) keep oclif's handling and exit codes.
    if ((err as { oclif?: unknown }).oclif !== undefined) throw err;
    const text = this.jsonOutput ? `${toJson(errorJson(err))}\n` : `Error: ${describeError(err)}\n`;
    // A pipe is written asynchronously: exiting before the write completes would cut the error short.
    await new Promise<void>((resolve) => process.stderr.write(text, () => resolve()));
    this.exit(1);
  }
}

/** The agent flags every agent command takes; they override the `--config` file. */
export const agentFlags = {
  'data-dir': Flags.string({
    description: 'The simulated agent\'s data dir: node ID and client state. Default: $DHV_DATA_DIR, else ./.dhv',
    helpGroup: 'AGENT',
  }),
  config: Flags.string({
    description: 'Agent config file in HCL or JSON, shaped like a Nomad client block (host_volume_plugin_dir, host_volumes_dir, node_pool, host_volume "name" {...}).',
    helpGroup: 'AGENT',
  }),
  'plugin-dir': Flags.string({ description: 'host_volume_plugin_dir. Default: <data-dir>/host_volume_plugins', helpGroup: 'AGENT' }),
  'volumes-dir': Flags.string({ description: 'host_volumes_dir. Default: <data-dir>/host_volumes', helpGroup: 'AGENT' }),
  'node-pool': Flags.string({ description: 'The node pool. Default: default', helpGroup: 'AGENT' }),
};

export interface AgentFlagValues {
  'data-dir'?: string | undefined;
  config?: string | undefined;
  'plugin-dir'?: string | undefined;
  'volumes-dir'?: string | undefined;
  'node-pool'?: string | undefined;
}

export function agentConfigFrom(flags: AgentFlagValues): Promise<AgentConfig> {
  return loadAgentConfig({
    dataDir: flags['data-dir'],
    config: flags.config,
    pluginDir: flags['plugin-dir'],
    volumesDir: flags['volumes-dir'],
    nodePool: flags['node-pool'],
  });
}

export async function openAgent(flags: AgentFlagValues, onWarning: (message: string) => void): Promise<Agent> {
  const agent = await Agent.open(await agentConfigFrom(flags), { onWarning });
  stopOnSignals(() => agent.shutdown());
  return agent;
}

/**
 * On Ctrl-C or a supervisor's TERM, runs `stop` (which kills the plugin in flight) before
 * exiting: a plugin left running would have nobody to enforce its deadline.
 */
export function stopOnSignals(stop: () => Promise<void> | void): void {
  for (const [signal, exitCode] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
    process.once(signal, () => void Promise.resolve(stop()).finally(() => process.exit(exitCode)));
  }
}
