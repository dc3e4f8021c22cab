import type { Operation } from '../protocol/operations.js';
import type { DecodedValue } from './decoded-value.js';
import { PluginError } from './errors.js';
import { interpretRun, runWarnings, type RunContext } from './interpret-run.js';
import { outputText, type LeftRunning, type OutputHolder, type PluginRun } from './plugin-run.js';

/**
 * What every run reports, whether it succeeded or failed: as execa's result and error,
 * one field set, so a caller reads a failed run the way it reads a good one.
 */
export interface RunDetails {
  pluginId: string;
  executable: string;
  /** Run in process (the harness's built-in mkdir), not as a program. */
  builtin: boolean;
  operation: string;
  /** Exactly what the plugin was given (the built-in gets the same request in process). */
  environment: Record<string, string>;
  stdout: string;
  stderr: string;
  /** stdout or stderr was longer than the cap and was cut (a cut stdout fails the run). */
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

/** A run and its outcome: the decoded value, or the typed error worded as the agent words it. */
export type PluginRunResult<Value> = RunDetails &
  ({ ok: true; value: Value; error?: undefined } | { ok: false; error: PluginError; value?: undefined });

export type OperationResult<Op extends Operation> = PluginRunResult<DecodedValue[Op]>;

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

/** What a run of a program reports of itself, whatever it decoded to. */
export function runDetails(
  run: PluginRun,
  context: { pluginId: string; executable: string; operation: string; timeoutMs: number },
): RunDetails {
  return {
    pluginId: context.pluginId,
    executable: context.executable,
    builtin: false,
    operation: context.operation,
    environment: { ...run.env },
    stdout: outputText(run.stdout),
    stderr: outputText(run.stderr),
    truncated: run.stdoutTruncated || run.stderrTruncated,
    durationMs: run.durationMs,
    exitCode: run.exitCode,
    signal: run.signal,
    timedOut: run.timedOut,
    outputHeldOpen: run.outputHeldOpen,
    outputHolders: run.outputHolders,
    leftRunning: run.leftRunning ?? [],
    warnings: runWarnings(run, context.timeoutMs),
  };
}

/** Who answered a call run in process, and what it was given. */
export type InProcessCall = Pick<RunDetails, 'pluginId' | 'executable' | 'builtin' | 'operation' | 'environment'>;

/**
 * A call answered in process (the built-in mkdir, a fake): no output and no exit, the
 * answer's value, or the PluginError it threw. `call` becomes the result, so a getter on
 * it (an environment built only when read) stays one.
 */
export async function runInProcess<Value>(
  call: InProcessCall,
  answer: () => Promise<Value>,
): Promise<PluginRunResult<Value>> {
  const started = performance.now();
  const details: RunDetails = Object.assign(call, noProcessOutput());
  try {
    const value = await answer();
    return Object.assign(details, { durationMs: performance.now() - started, ok: true as const, value });
  } catch (err) {
    if (!(err instanceof PluginError)) throw err;
    return Object.assign(details, { durationMs: performance.now() - started, ok: false as const, error: err });
  }
}

/** A call that failed before anything ran (the plugin was not found or cannot run). */
export function notRun<Op extends Operation>(operation: Op, error: PluginError): OperationResult<Op> {
  return {
    pluginId: error.pluginId,
    executable: error.executable,
    builtin: false,
    operation,
    environment: {},
    ...noProcessOutput(),
    ok: false,
    error,
  };
}

/**
 * How the agent reads a run of a protocol operation: the decoded value, or the error in
 * its words. `dhv replay` judges a recorded answer and a replayed one through this, so
 * both are read the same way.
 */
export function judgeRun<Op extends Operation>(
  operation: Op,
  run: PluginRun,
  context: RunContext,
): { ok: true; value: DecodedValue[Op] } | { ok: false; error: PluginError } {
  try {
    return { ok: true, value: interpretRun(operation, run, context) };
  } catch (err) {
    if (err instanceof PluginError) return { ok: false, error: err };
    throw err;
  }
}

/** The value of a run, or its error thrown: for callers that stop at the first failure. */
export function valueOf<Value>(result: PluginRunResult<Value>): Value {
  if (!result.ok) throw result.error;
  return result.value;
}

/** A good run's details with its decoded value beside them, as `execPlugin` returns it. */
export type RunWithValue<Value> = RunDetails & Value;

/** The run's details and its value in one object, or its error thrown: what `execPlugin` returns and the checks read. */
export function valueWithRun<Value extends object>(result: PluginRunResult<Value>): RunWithValue<Value> {
  if (!result.ok) throw result.error;
  const { ok: _ok, value, error: _error, ...details } = result;
  return { ...details, ...value };
}
