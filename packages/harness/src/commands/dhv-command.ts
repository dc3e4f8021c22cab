import { Command, Flags, type Interfaces } from '@oclif/core';
import { encodeJson } from '@dhv/sdk';
import { CleanupJournal, finishOrphanedJournals, releaseJournalOnCrash } from '@dhv/sdk/host';
import { Agent } from '../agent/agent.js';
import { loadAgentConfig, type AgentConfig, type DataDirFrom } from '../config/agent-config.js';
import { requireDataDir } from '../config/data-dir.js';
import { EXIT_CODES } from '../errors/exit-codes.js';
import { errorExitCode, errorJson, describeError } from '../presenters/format-error.js';
import { nomadSpelling } from './volume/nomad-flags.js';

/** What oclif's parser gives for flags and for arguments. */
type Parsed = Record<string, unknown>;

/**
 * What every `dhv` command shares: oclif's `--json` flag (the value `run` returns is
 * printed as JSON, bigints as plain integers), warnings on stderr, and one way of ending
 * on an error: `Error: ...` on stderr, or with `--json` the document
 * `{"apiVersion": "dhv/v1", "kind": "Error", "error": {"code", "message", ...}}`, and the
 * exit code from EXIT_CODES. Usage mistakes oclif finds (an unknown
 * flag, a missing argument) take the same way. Every flag longer than one letter may also
 * be spelled with one dash, as Nomad spells its flags (`-json`, `-data-dir=x`).
 */
export abstract class DhvCommand extends Command {
  static override enableJsonFlag = true;

  protected get jsonOutput(): boolean {
    return this.jsonEnabled();
  }

  protected override parse<F extends Parsed, B extends Parsed, A extends Parsed>(
    options?: Interfaces.Input<F, B, A>,
    argv: string[] = this.argv,
  ): Promise<Interfaces.ParserOutput<F, B, A>> {
    const input = options ?? (this.ctor as unknown as Interfaces.Input<F, B, A>);
    const flags = { ...input.baseFlags, ...input.flags, ...(input.enableJsonFlag === false ? {} : { json: true }) };
    // oclif would take a missing argument from a piped stdin (a script's loop input as a
    // volume ID); Nomad's CLI, and the lean start-up, never read one from there.
    const args = Object.fromEntries(
      Object.entries(input.args ?? {}).map(([name, arg]) => [name, { ...arg, ignoreStdin: true }]),
    ) as typeof input.args;
    // Named one by one: a command class's inherited statics (enableJsonFlag) are not its own to spread.
    const { baseFlags, enableJsonFlag, strict } = input;
    return super.parse(
      { ...input, flags: input.flags, baseFlags, enableJsonFlag, strict, args },
      nomadSpelling(argv, flags),
    );
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

  /**
   * Prints a `--json` document. One that is an object of dhv's gets the data dir the
   * command used: `DataDir: {Path, From}`, or `dataDir: {path, from}` in a camelCase
   * (`apiVersion`-headed) document. Nomad's own objects and lists go through printNomadJson.
   */
  protected printJson(value: unknown): void {
    this.logJson(withDataDir(value, this.dataDirUsed));
  }

  /**
   * Prints one of Nomad's own objects (a volume, a node, an allocation) or a list as
   * Nomad's API gives it, nothing added; the data dir line goes on stderr once it is
   * printed (after the document, so a failure's stderr stays one error document).
   */
  protected printNomadJson(value: unknown): void {
    this.logJson(value);
    this.sayDataDir();
  }

  /** The data dir line, on stderr; none when `--data-dir` named it (the command line says it). */
  private sayDataDir(): void {
    const used = this.dataDirUsed;
    if (used !== undefined && used.from !== '--data-dir')
      process.stderr.write(`==> Data dir: ${used.path} (${used.source})\n`);
  }

  override logJson(json: unknown): void {
    process.stdout.write(`${encodeJson(json, { indent: 2 })}\n`);
  }

  /** Warnings said with --json, where stderr is for the one error document: it carries them if the command fails. */
  private readonly heldWarnings: string[] = [];

  /** What warnLine said so far with --json, for a document that reports a failure itself (the check report). */
  protected get warningsSaid(): readonly string[] {
    return this.heldWarnings;
  }

  protected warnLine(message: string): void {
    if (this.jsonOutput) this.heldWarnings.push(message);
    else process.stderr.write(`warning: ${message}\n`);
  }

  /** The data dir this command resolved (agentConfig, openAgent), which its output names. */
  private dataDirUsed: { path: string; from: DataDirFrom; source: string } | undefined;

  /**
   * The agent config from the agent flags. Every command that uses a data dir resolves it
   * here, and says which one: with --json, a `DataDir` field in the document it prints
   * (printJson); else, unless `--data-dir` named it on the command line itself,
   * `==> Data dir: <path> (<where it came from>)` on stderr.
   */
  protected async agentConfig(flags: AgentFlagValues, options: { mustExist?: boolean } = {}): Promise<AgentConfig> {
    const config = await agentConfigFrom(flags);
    const source = config.dataDirSource ?? '--data-dir';
    if (options.mustExist) requireDataDir(config.dataDir, source);
    this.dataDirUsed = { path: config.dataDir, from: config.dataDirFrom ?? '--data-dir', source };
    if (!this.jsonOutput) this.sayDataDir();
    return config;
  }

  /**
   * Opens the agent; the config file's warnings (keys Nomad would not know) go to
   * `onConfigWarning`, the agent's to `onWarning` (both warnLine unless given). A read-only
   * command never makes a data dir.
   */
  protected async openAgent(
    flags: AgentFlagValues,
    options: {
      readOnly?: boolean;
      onWarning?: (message: string) => void;
      onConfigWarning?: (message: string) => void;
    } = {},
  ): Promise<Agent> {
    const onWarning = options.onWarning ?? ((message: string) => this.warnLine(message));
    const onConfigWarning = options.onConfigWarning ?? ((message: string) => this.warnLine(message));
    const config = await this.agentConfig(flags, { mustExist: options.readOnly ?? false });
    for (const w of config.warnings ?? []) onConfigWarning(`${config.configFile ?? 'agent config'}: ${w}`);
    const agent = await Agent.open(config, { onWarning });
    stopOnSignals(() => agent.shutdown());
    return agent;
  }

  /**
   * Before any command runs: finishes what a dhv killed outright left in its cleanup journal,
   * and says so: on stderr, or with --json among the warnings the error document carries
   * (stderr then holds that one document, which a line of text before it would break).
   */
  override async init(): Promise<void> {
    await super.init();
    for (const line of await finishOrphanedJournals().catch(() => [])) {
      if (this.jsonOutput) this.heldWarnings.push(line);
      else process.stderr.write(`dhv: ${line}\n`);
    }
  }

  protected override async catch(err: Interfaces.CommandError): Promise<never> {
    // this.exit() ends a command by throwing; it is not an error to report.
    if ((err as { code?: unknown }).code === 'EEXIT') throw err;
    // Whatever an error skipped past: what this run recorded is released before it ends.
    for (const problem of (await CleanupJournal.ofThisProcess()?.releaseAll()) ?? [])
      this.warnLine(`could not release what this run made: ${problem}`);
    await writeError(err, this.jsonOutput, this.heldWarnings);
    this.exit(errorExitCode(err));
  }
}

function withDataDir(value: unknown, used: { path: string; from: DataDirFrom } | undefined): unknown {
  if (used === undefined || value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  // The document's own casing, not its head: the Nomad-shaped commands' reports are headed too.
  const pascal = Object.keys(value).some((key) => key !== 'apiVersion' && key !== 'kind' && /^[A-Z]/.test(key));
  return pascal
    ? { ...value, DataDir: { Path: used.path, From: used.from } }
    : { ...value, dataDir: { path: used.path, from: used.from } };
}

/** Writes an error to stderr as every command ends with one: `Error: ...`, or its JSON form with the warnings said before it. */
export async function writeError(err: unknown, json: boolean, warnings: readonly string[] = []): Promise<void> {
  const text = json ? `${encodeJson(errorJson(err, warnings), { indent: 2 })}\n` : `Error: ${describeError(err)}\n`;
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

function agentConfigFrom(flags: AgentFlagValues): Promise<AgentConfig> {
  return loadAgentConfig({
    dataDir: flags['data-dir'],
    config: flags.config,
    pluginDir: flags['plugin-dir'],
    volumesDir: flags['volumes-dir'],
    nodePool: flags['node-pool'],
  });
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

/** What a command that cleans up on its way out does with SIGINT, SIGTERM and SIGHUP. */
export interface Interruptions {
  /** The exit code of the first signal (130, 143, 129), once one came. */
  exitCode(): number | undefined;
}

const SIGNAL_EXIT_CODES = {
  SIGINT: EXIT_CODES.interrupted,
  SIGTERM: EXIT_CODES.terminated,
  SIGHUP: 128 + 1,
} as const;

/**
 * The first SIGINT, SIGTERM or SIGHUP aborts `stop` (the work ends, and its cleanup runs
 * in full: the plugin's own deletes); every further one aborts `hurry` (the cleanup kills
 * what still runs and releases by force). No signal ever ends the process before its
 * cleanup: a second Ctrl-C means "faster", never "leave it". An exception nothing caught
 * releases what the cleanup journal still lists before the exit.
 */
export function interruptions(
  stop: AbortController,
  hurry: AbortController,
  say: (line: string) => void,
): Interruptions {
  let first: keyof typeof SIGNAL_EXIT_CODES | undefined;
  const on = (signal: keyof typeof SIGNAL_EXIT_CODES) => () => {
    if (first === undefined) {
      first = signal;
      say(`${signal}: stopping; cleaning up what this run made (again to hurry)`);
      stop.abort();
    } else {
      say(`${signal}: hurrying: killing what still runs and releasing what is left by force`);
      hurry.abort();
    }
  };
  // Kept until the exit: a late signal, once everything is released, changes nothing.
  for (const signal of Object.keys(SIGNAL_EXIT_CODES) as Array<keyof typeof SIGNAL_EXIT_CODES>)
    process.on(signal, on(signal));
  releaseJournalOnCrash(say);
  return { exitCode: () => (first === undefined ? undefined : SIGNAL_EXIT_CODES[first]) };
}
