import { Command, Flags, type Interfaces } from '@oclif/core';
import { encodeJson } from '@dhv/sdk';
import { Agent } from '../agent/agent.js';
import { loadAgentConfig, type AgentConfig } from '../config/agent-config.js';
import { EXIT_CODES } from '../errors/exit-codes.js';
import { errorExitCode, errorJson, describeError } from '../presenters/format-error.js';

/**
 * What every `dhv` command shares: oclif's `--json` flag (the value `run` returns is
 * printed as JSON, bigints as plain integers), warnings on stderr, and one way of ending
 * on an error: `Error: ...` on stderr, or `{"error": {"code", "message", ...}}` with
 * `--json`, and the exit code from EXIT_CODES. Usage mistakes oclif finds (an unknown
 * flag, a missing argument) take the same way.
 */
export abstract class DhvCommand extends Command {
  static override enableJsonFlag = true;

  protected get jsonOutput(): boolean {
    return this.jsonEnabled();
  }

  protected print(text: string): void {
    process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  }

  /**
   * Writes text made of many parts (a `-t` template's output) in chunks, never joined
   * into one string (which JavaScript caps far below what Go's templates write), then a
   * newline if it has none.
   */
  protected printParts(parts: readonly string[]): void {
    const CHUNK = 64 * 1024;
    let chunk = '';
    let last = '';
    for (const part of parts) {
      if (part === '') continue;
      last = part;
      if (chunk.length + part.length <= CHUNK) {
        chunk += part;
        continue;
      }
      if (chunk !== '') process.stdout.write(chunk);
      chunk = part.length > CHUNK ? '' : part;
      if (part.length > CHUNK) process.stdout.write(part);
    }
    process.stdout.write(last.endsWith('\n') ? chunk : `${chunk}\n`);
  }

  protected printJson(value: unknown): void {
    this.logJson(value);
  }

  override logJson(json: unknown): void {
    process.stdout.write(`${encodeJson(json, { indent: 2 })}\n`);
  }

  protected warnLine(message: string): void {
    if (!this.jsonOutput) process.stderr.write(`warning: ${message}\n`);
  }

  protected override async catch(err: Interfaces.CommandError): Promise<never> {
    // this.exit() ends a command by throwing; it is not an error to report.
    if ((err as { code?: unknown }).code === 'EEXIT') throw err;
    await writeError(err, this.jsonOutput);
    this.exit(errorExitCode(err));
  }
}

/** Writes an error to stderr as every command ends with one: `Error: ...`, or its JSON form. */
export async function writeError(err: unknown, json: boolean): Promise<void> {
  const text = json ? `${encodeJson(errorJson(err), { indent: 2 })}\n` : `Error: ${describeError(err)}\n`;
  // A pipe is written asynchronously: exiting before the write completes would cut the error short.
  await new Promise<void>((resolve) => process.stderr.write(text, () => resolve()));
}

/** The agent flags every agent command takes; they override the `--config` file. */
export const agentFlags = {
  'data-dir': Flags.string({
    description:
      "The simulated agent's data dir: node ID and client state. Default: data_dir in --config, else $DHV_DATA_DIR (both, differing: an error), else ./.dhv",
    helpGroup: 'AGENT',
  }),
  config: Flags.string({
    description:
      'Agent config file in HCL or JSON, shaped like a Nomad client block (host_volume_plugin_dir, host_volumes_dir, node_pool, host_volume "name" {...}).',
    helpGroup: 'AGENT',
  }),
  'plugin-dir': Flags.string({
    description: 'host_volume_plugin_dir. Default: <data-dir>/host_volume_plugins',
    helpGroup: 'AGENT',
  }),
  'volumes-dir': Flags.string({
    description: 'host_volumes_dir. Default: <data-dir>/host_volumes',
    helpGroup: 'AGENT',
  }),
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

/** Opens the agent; the config file's warnings (keys Nomad would not know) go to `onConfigWarning`, the agent's to `onWarning`. */
export async function openAgent(
  flags: AgentFlagValues,
  onWarning: (message: string) => void,
  onConfigWarning: (message: string) => void = onWarning,
): Promise<Agent> {
  const config = await agentConfigFrom(flags);
  for (const w of config.warnings ?? []) onConfigWarning(`${config.configFile ?? 'agent config'}: ${w}`);
  const agent = await Agent.open(config, { onWarning });
  stopOnSignals(() => agent.shutdown());
  return agent;
}

/**
 * On Ctrl-C or a supervisor's TERM, runs `stop` (which kills the plugin in flight) before
 * exiting: a plugin left running would have nobody to enforce its deadline.
 */
export function stopOnSignals(stop: () => Promise<void> | void): void {
  const signals = [
    ['SIGINT', EXIT_CODES.interrupted],
    ['SIGTERM', EXIT_CODES.terminated],
  ] as const;
  for (const [signal, exitCode] of signals) {
    process.once(signal, () => void Promise.resolve(stop()).finally(() => process.exit(exitCode)));
  }
}
