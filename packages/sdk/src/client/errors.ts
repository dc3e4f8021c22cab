import type { Operation } from '../protocol/operations.js';
import type { PluginRun } from './plugin-run.js';
import { goQuote } from '../go/strconv.js';

/**
 * Every way running a plugin can fail, built in one place. Each error carries what a
 * caller needs to act on it, and its message reads like the Nomad agent's own.
 */
export type PluginErrorCode =
  | 'PLUGIN_NOT_FOUND'
  | 'PLUGIN_NOT_EXECUTABLE'
  | 'PLUGIN_SPAWN_FAILED'
  | 'PLUGIN_TIMED_OUT'
  | 'PLUGIN_ABORTED'
  | 'PLUGIN_FAILED'
  | 'PLUGIN_BAD_OUTPUT';

/** What an error keeps of the run (`PluginRun`, its output as text), with Nomad's words and dhv's hints. */
export interface PluginRunDetails extends Partial<Pick<PluginRun, 'exitCode' | 'signal' | 'durationMs'>> {
  pluginId: string;
  executable: string;
  operation: string;
  volumeId?: string | undefined;
  stdout?: string | undefined;
  stderr?: string | undefined;
  /** The `error` the plugin wrote to stdout, if any. */
  pluginMessage?: string | undefined;
  /** stdout or stderr was longer than the cap and was cut. */
  truncated?: boolean | undefined;
  /** The error Go's os/exec gave (`exit status 1`, `signal: killed`, `fork/exec ...`): what the agent logs. */
  runError?: string | undefined;
  /** Set when a real agent panics here (and the agent process dies) instead of returning an error. */
  nomadPanic?: string | undefined;
  /** Nomad's whole error text, when it is not `<prefix>: <reason>` (lookup, decode and delete errors). */
  nomadMessage?: string | undefined;
  /** What dhv adds: what happened beyond Nomad's words, what to do next. Printed on the lines after them. */
  hints?: readonly string[] | undefined;
  /** Why the plugin, which is there, could not be started, with the fix (the run's `spawnProblem`). */
  spawnProblem?: string | undefined;
}

export class PluginError extends Error {
  readonly pluginId: string;
  readonly executable: string;
  readonly operation: string;
  readonly volumeId: string | undefined;
  readonly exitCode: number | null | undefined;
  readonly signal: NodeJS.Signals | null | undefined;
  readonly stdout: string;
  readonly stderr: string;
  readonly pluginMessage: string | undefined;
  readonly truncated: boolean;
  readonly durationMs: number | undefined;
  /** The first line(s) of the message: exactly what a Nomad agent says. */
  readonly nomadMessage: string;
  /** dhv's own lines after Nomad's. */
  readonly hints: readonly string[];
  readonly runError: string | undefined;
  readonly nomadPanic: string | undefined;
  readonly spawnProblem: string | undefined;

  constructor(
    readonly code: PluginErrorCode,
    readonly reason: string,
    details: PluginRunDetails,
  ) {
    const nomadMessage = details.nomadMessage ?? `${prefix(details)}: ${reason}`;
    const hints = details.hints ?? [];
    super([nomadMessage, ...hints].join('\n'));
    this.nomadMessage = nomadMessage;
    this.hints = hints;
    this.runError = details.runError;
    this.nomadPanic = details.nomadPanic;
    this.spawnProblem = details.spawnProblem;
    this.name = 'PluginError';
    this.pluginId = details.pluginId;
    this.executable = details.executable;
    this.operation = details.operation;
    this.volumeId = details.volumeId;
    this.exitCode = details.exitCode;
    this.signal = details.signal;
    this.stdout = details.stdout ?? '';
    this.stderr = details.stderr ?? '';
    this.pluginMessage = details.pluginMessage;
    this.truncated = details.truncated ?? false;
    this.durationMs = details.durationMs;
  }

  toJSON() {
    return {
      code: this.code,
      message: this.message,
      nomadMessage: this.nomadMessage,
      hints: this.hints,
      reason: this.reason,
      pluginId: this.pluginId,
      executable: this.executable,
      operation: this.operation,
      volumeId: this.volumeId,
      exitCode: this.exitCode,
      signal: this.signal,
      pluginMessage: this.pluginMessage,
      stdout: this.stdout,
      stderr: this.stderr,
      truncated: this.truncated,
      durationMs: this.durationMs,
      ...(this.spawnProblem ? { spawnProblem: this.spawnProblem } : {}),
    };
  }
}

/** The agent's wording: `error creating volume "<id>" with plugin "<plugin>"`. */
function prefix({ operation, volumeId, pluginId }: PluginRunDetails): string {
  switch (operation as Operation | 'resolve') {
    case 'create':
      return `error creating volume ${goQuote(volumeId ?? '')} with plugin ${goQuote(pluginId)}`;
    case 'delete':
      return `error deleting volume ${goQuote(volumeId ?? '')} with plugin ${goQuote(pluginId)}`;
    case 'fingerprint':
      return `error fingerprinting plugin ${goQuote(pluginId)}`;
    case 'resolve':
      return `error looking up plugin ${goQuote(pluginId)}`;
    default:
      return `error running operation ${goQuote(operation)} of plugin ${goQuote(pluginId)}`;
  }
}

/** How Go's os/exec describes an exit: `exit status 1`, `signal: killed`. */
export function describeExit(exitCode: number | null | undefined, signal: NodeJS.Signals | null | undefined): string {
  if (signal) return `signal: ${SIGNAL_NAMES[signal] ?? signal}`;
  return `exit status ${exitCode ?? -1}`;
}

const SIGNAL_NAMES: Partial<Record<NodeJS.Signals, string>> = {
  SIGKILL: 'killed',
  SIGTERM: 'terminated',
  SIGINT: 'interrupt',
  SIGSEGV: 'segmentation fault',
  SIGABRT: 'aborted',
  SIGHUP: 'hangup',
  SIGPIPE: 'broken pipe',
  SIGBUS: 'bus error',
  SIGFPE: 'floating point exception',
  SIGILL: 'illegal instruction',
  SIGQUIT: 'quit',
  SIGUSR1: 'user defined signal 1',
  SIGUSR2: 'user defined signal 2',
};

/** Nomad's lookup errors: `no such plugin: "<id>"` (ErrPluginNotExists) and `plugin not executable: "<id>"`. */
export function pluginNotFound(
  pluginId: string,
  executable: string,
  hints: readonly string[] = [],
  operation = 'resolve',
): PluginError {
  return lookupError(
    'PLUGIN_NOT_FOUND',
    `no such plugin: ${goQuote(pluginId)}`,
    pluginId,
    executable,
    hints,
    operation,
  );
}

export function pluginNotExecutable(
  pluginId: string,
  executable: string,
  hints: readonly string[] = [],
  operation = 'resolve',
): PluginError {
  const nomadMessage = `plugin not executable: ${goQuote(pluginId)}`;
  return lookupError('PLUGIN_NOT_EXECUTABLE', nomadMessage, pluginId, executable, hints, operation);
}

function lookupError(
  code: 'PLUGIN_NOT_FOUND' | 'PLUGIN_NOT_EXECUTABLE',
  nomadMessage: string,
  pluginId: string,
  executable: string,
  hints: readonly string[],
  operation: string,
): PluginError {
  return new PluginError(code, nomadMessage, { pluginId, executable, operation, nomadMessage, hints });
}
