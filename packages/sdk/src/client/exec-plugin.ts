import { basename } from 'node:path';
import { AGENT_TIMEOUT_MS, type Operation } from '../protocol/operations.js';
import { decodeCreateOutput, decodeErrorOutput, decodeFingerprintOutput } from '../protocol/decode.js';
import { buildEnvironment, type RequestInput } from './environment.js';
import { DEFAULT_MAX_OUTPUT_BYTES, spawnPlugin, type SpawnResult } from './spawn-plugin.js';
import { PluginError, describeExit, type PluginRunDetails } from './errors.js';

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

interface RunInfo {
  stdout: string;
  stderr: string;
  /** stderr was longer than maxOutputBytes and was cut (a long stdout fails the run instead). */
  truncated: boolean;
  durationMs: number;
}

export interface FingerprintResult extends RunInfo {
  /** The version as the agent stores it (`1` becomes `1.0.0`). */
  version: string;
  /** The version as the plugin wrote it. */
  rawVersion: string;
}

export interface CreateResult extends RunInfo {
  path: string;
  bytes: bigint;
}

export type DeleteResult = RunInfo;

export interface ResultByOperation {
  fingerprint: FingerprintResult;
  create: CreateResult;
  delete: DeleteResult;
}

/**
 * Runs one operation of any plugin, in any language, exactly as a Nomad agent does,
 * and returns its decoded response. Throws a PluginError for every kind of failure.
 */
export async function execPlugin<Op extends Operation>(
  executable: string,
  operation: Op,
  request: RequestInput<Op>,
  options: ExecOptions = {},
): Promise<ResultByOperation[Op]> {
  const env = buildEnvironment(operation, request, executable);
  const run = await spawnPlugin(executable, [operation], env, {
    timeoutMs: options.timeoutMs ?? AGENT_TIMEOUT_MS[operation],
    signal: options.signal,
    maxOutputBytes: options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES,
    cwd: options.cwd,
  });
  const volumeId = (request as { volumeId?: string }).volumeId;
  return interpretRun(operation, run, {
    pluginId: options.pluginId ?? basename(executable),
    executable,
    volumeId,
    timeoutMs: options.timeoutMs ?? AGENT_TIMEOUT_MS[operation],
  }) as ResultByOperation[Op];
}

interface RunContext {
  pluginId: string;
  executable: string;
  volumeId: string | undefined;
  timeoutMs: number;
}

/** Turns a finished run into a typed result or a typed error, in the order the agent would notice things. */
export function interpretRun(
  operation: string,
  run: SpawnResult,
  { pluginId, executable, volumeId, timeoutMs }: RunContext,
): FingerprintResult | CreateResult | DeleteResult {
  const stdout = new TextDecoder().decode(run.stdout);
  const stderr = new TextDecoder().decode(run.stderr);
  const details: PluginRunDetails = {
    pluginId,
    executable,
    operation,
    volumeId,
    exitCode: run.exitCode,
    signal: run.signal,
    stdout,
    stderr,
    truncated: run.stdoutTruncated || run.stderrTruncated,
    durationMs: run.durationMs,
  };
  if (run.spawnError) throw spawnFailure(run.spawnError, details);
  if (run.timedOut) {
    throw new PluginError('PLUGIN_TIMED_OUT', `timed out after ${formatMs(timeoutMs)} and was killed (signal: killed)`, details);
  }
  if (run.aborted) throw new PluginError('PLUGIN_ABORTED', 'cancelled (the caller shut down) and was killed', details);
  if (run.stdoutTruncated) {
    throw new PluginError('PLUGIN_BAD_OUTPUT', `wrote more than ${formatBytes(run.stdout.length)} to stdout and was killed; a response is one small JSON document`, details);
  }
  if (run.exitCode !== 0) {
    const pluginMessage = decodeErrorOutput(stdout);
    const reason = describeExit(run.exitCode, run.signal) + (pluginMessage ? `: ${pluginMessage}` : '');
    throw new PluginError('PLUGIN_FAILED', reason, { ...details, pluginMessage });
  }
  if (run.outputHeldOpen) {
    throw new PluginError(
      'PLUGIN_BAD_OUTPUT',
      'exited, but a process it started kept stdout or stderr open (a real agent waits for it forever); it was killed',
      details,
    );
  }
  const info: RunInfo = { stdout, stderr, truncated: run.stderrTruncated, durationMs: run.durationMs };
  switch (operation) {
    case 'fingerprint': {
      const decoded = decodeFingerprintOutput(stdout);
      if (!decoded.ok) throw badOutput(decoded.error, details);
      return { ...info, version: decoded.value.version.normalized, rawVersion: decoded.value.version.original };
    }
    case 'create': {
      const decoded = decodeCreateOutput(stdout);
      if (!decoded.ok) throw badOutput(decoded.error, details);
      if (decoded.value.path === '') {
        throw badOutput('create returned no "path" (a real agent accepts it, but nobody can mount the volume)', details);
      }
      return { ...info, ...decoded.value };
    }
    default:
      return info;
  }
}

function badOutput(problem: string, details: PluginRunDetails): PluginError {
  const shown = details.stdout && details.stdout.length > 200 ? `${details.stdout.slice(0, 200)}…` : details.stdout;
  return new PluginError('PLUGIN_BAD_OUTPUT', `bad output: ${problem} (stdout was ${JSON.stringify(shown)})`, details);
}

function spawnFailure(err: NodeJS.ErrnoException, details: PluginRunDetails): PluginError {
  switch (err.code) {
    case 'ENOENT':
      return new PluginError('PLUGIN_NOT_FOUND', `no such plugin: ${details.executable} does not exist, or its interpreter line names a program that does not`, details);
    case 'EACCES':
      return new PluginError('PLUGIN_NOT_EXECUTABLE', `plugin is not executable: ${details.executable} (chmod +x it)`, details);
    case 'ENOEXEC':
      return new PluginError('PLUGIN_NOT_EXECUTABLE', `exec format error: ${details.executable} is not a program and has no #! interpreter line`, details);
    default:
      return new PluginError('PLUGIN_SPAWN_FAILED', `could not start ${details.executable}: ${err.message}`, details);
  }
}

function formatMs(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

function formatBytes(n: number): string {
  return n >= 1024 * 1024 ? `${n / (1024 * 1024)} MiB` : `${n} bytes`;
}
