import type { Operation } from '@dhv/sdk';
import type {
  Discovery,
  LeftRunning,
  OutputHolder,
  PluginError,
  PluginRef,
  RequestInput,
  ResponseValue,
} from '@dhv/sdk/client';

/** What each operation decodes to (the SDK's response table says): the version, the volume's path and size, nothing. */
export type DecodedValue = ResponseValue;

/** One plugin call: which plugin, the request, and how the agent runs it. */
export interface PluginCall<Op extends Operation> {
  /** An ID looked up in the plugin dir as the agent does (the file checked is the file run), or an executable's path. */
  plugin: PluginRef | string;
  request: RequestInput<Op>;
  /** The ID in messages for a plugin given by its path; default: the file name. */
  pluginId?: string | undefined;
  /** Default: the agent's (1 s fingerprint, 60 s create and delete). */
  timeoutMs?: number | undefined;
  /** Aborting kills the plugin's process group. */
  signal?: AbortSignal | undefined;
  cwd?: string | undefined;
  /** How long output a leftover process holds after the plugin exited is waited for. Default: the deadline. */
  outputGraceMs?: number | undefined;
}

/**
 * What every run reports, whether it succeeded or failed: as execa's result and error,
 * one field set, so a caller reads a failed run the way it reads a good one.
 */
export interface RunDetails {
  pluginId: string;
  executable: string;
  /** Run in process (the built-in mkdir), not as a program. */
  builtin: boolean;
  operation: string;
  /** Exactly what the plugin was given (the built-in gets the same request in process). */
  environment: Record<string, string>;
  stdout: string;
  stderr: string;
  /** stdout or stderr was longer than the cap and was cut. */
  truncated: boolean;
  durationMs: number;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  /** The plugin exited but a process it started held its output open, and was killed. */
  outputHeldOpen: boolean;
  outputHolders: OutputHolder[];
  /** Processes of the plugin's group still running once it exited (each killed; a real agent leaves them). */
  leftRunning: LeftRunning[];
  /** What dhv noticed that a real agent would not say (sockets instead of pipes, a helper killed at the deadline). */
  warnings: string[];
}

/** What a run that started no process (the built-in, the fake, a plugin not found) has of one. */
export function noProcessOutput(): Omit<
  RunDetails,
  'pluginId' | 'executable' | 'builtin' | 'operation' | 'environment'
> {
  return {
    stdout: '',
    stderr: '',
    truncated: false,
    durationMs: 0,
    exitCode: null,
    signal: null,
    timedOut: false,
    outputHeldOpen: false,
    outputHolders: [],
    leftRunning: [],
    warnings: [],
  };
}

/** A run and its outcome: the decoded value, or the typed error worded as the agent words it. */
export type PluginRunResult<Value> = RunDetails &
  ({ ok: true; value: Value; error?: undefined } | { ok: false; error: PluginError; value?: undefined });

export type OperationResult<Op extends Operation> = PluginRunResult<DecodedValue[Op]>;

/**
 * The one door every plugin call goes through (the agent, `dhv plugin run`, `dhv check`,
 * gc, `dhv build`'s smoke test). The real runners are the process runner
 * (runner/process-runner.ts) and the built-in mkdir (agent/builtin-mkdir-runner.ts); a test
 * hands the agent a fake (`FakePluginRunner` from `@dhv/harness/testing`).
 */
export interface PluginRunner {
  run<Op extends Operation>(operation: Op, call: PluginCall<Op>): Promise<OperationResult<Op>>;
  /** Finds a plugin without running it: its executable, or the agent's lookup error (a PluginError). */
  lookup(pluginDir: string, pluginId: string): Promise<string>;
  /** Discovery at start or reload: every candidate in the dir fingerprinted, failures skipped with the reason. */
  discover(pluginDir: string, options?: { signal?: AbortSignal | undefined }): Promise<Discovery>;
}

/** The value of a run, or its error thrown: for callers that stop at the first failure. */
export function valueOf<Value>(result: PluginRunResult<Value>): Value {
  if (!result.ok) throw result.error;
  return result.value;
}
