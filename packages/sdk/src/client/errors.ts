import type { Operation } from '../protocol/operations.js';

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

export interface PluginRunDetails {
  pluginId: string;
  executable: string;
  operation: string;
  volumeId?: string | undefined;
  exitCode?: number | null | undefined;
  signal?: NodeJS.Signals | null | undefined;
  stdout?: string | undefined;
  stderr?: string | undefined;
  /** The `error` the plugin wrote to stdout, if any. */
  pluginMessage?: string | undefined;
  /** stdout or stderr was longer than the cap and was cut. */
  truncated?: boolean | undefined;
  durationMs?: number | undefined;
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

  constructor(readonly code: PluginErrorCode, readonly reason: string, details: PluginRunDetails) {
    super(`${prefix(details)}: ${reason}`);
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
    };
  }
}

/** The agent's wording: `error creating volume "<id>" with plugin "<plugin>"`. */
function prefix({ operation, volumeId, pluginId }: PluginRunDetails): string {
  switch (operation as Operation | 'resolve') {
    case 'create':
      return `error creating volume "${volumeId ?? ''}" with plugin "${pluginId}"`;
    case 'delete':
      return `error deleting volume "${volumeId ?? ''}" with plugin "${pluginId}"`;
    case 'fingerprint':
      return `error fingerprinting plugin "${pluginId}"`;
    case 'resolve':
      return `error looking up plugin "${pluginId}"`;
    default:
      return `error running operation "${operation}" of plugin "${pluginId}"`;
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

export function pluginNotFound(pluginId: string, executable: string, why: string, operation = 'resolve'): PluginError {
  return new PluginError('PLUGIN_NOT_FOUND', `no such plugin: ${why}`, { pluginId, executable, operation });
}
