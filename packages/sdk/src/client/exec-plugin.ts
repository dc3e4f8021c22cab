import type { Operation } from '../protocol/operations.js';
import type { DecodedValue } from './decoded-value.js';
import type { RequestInput } from './environment.js';
import type { PluginRef } from './plugin-call.js';
import { ProcessRunner } from './process-runner.js';
import { valueWithRun, type RunWithValue } from './run-result.js';

export interface ExecOptions {
  /** Defaults to the agent's: 1 s for fingerprint, 60 s for create and delete. */
  timeoutMs?: number;
  /** Aborting kills the plugin's process group, as an agent shutting down should. */
  signal?: AbortSignal;
  /** How much of stdout and of stderr to keep; more stdout than this fails the call. Default 4 MiB. */
  maxOutputBytes?: number;
  cwd?: string;
  /** The plugin ID used in messages; defaults to the executable's file name. */
  pluginId?: string;
}

/** A good run of an operation: the run's details (output, exit, warnings) and what it decoded to. */
export type ExecResult<Op extends Operation> = RunWithValue<DecodedValue[Op]>;
/** `version` as the agent stores it (`1` becomes `1.0.0`), `rawVersion` as the plugin wrote it. */
export type FingerprintResult = ExecResult<'fingerprint'>;
export type CreateResult = ExecResult<'create'>;
export type DeleteResult = ExecResult<'delete'>;
export type ResultByOperation = { [Op in Operation]: ExecResult<Op> };

const runner = new ProcessRunner();

/**
 * Runs one operation of any plugin, in any language, exactly as a Nomad agent does, and
 * returns its decoded response: a `ProcessRunner`'s run, its error thrown. Given
 * `{pluginDir, pluginId}` it first looks the plugin up as the agent does and runs the very
 * file it checked. Throws a PluginError for every kind of failure, its message Nomad's
 * own words first.
 */
export async function execPlugin<Op extends Operation>(
  plugin: string | PluginRef,
  operation: Op,
  request: RequestInput<Op>,
  options: ExecOptions = {},
): Promise<ExecResult<Op>> {
  return valueWithRun(await runner.run(operation, { plugin, request, ...options }));
}
