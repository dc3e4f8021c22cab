import { decodeCreateOutput, decodeErrorOutput, decodeFingerprintOutput } from '../protocol/decode.js';
import type { Operation } from '../protocol/operations.js';
import { goErrnoText } from '../go/errno.js';
import { goQuote } from '../go/strconv.js';
import type { DecodedValue } from './decoded-value.js';
import { responseValue } from '../protocol/response.js';
import { PluginError, describeExit, type PluginErrorCode, type PluginRunDetails } from './errors.js';
import { loadedMachineHint } from './machine-load.js';
import { outputText, type PluginRun } from './plugin-run.js';
import { spawnHints } from './spawn-hints.js';

/** What a real agent does when a fingerprint prints no version. */
export const NIL_VERSION_PANIC = 'runtime error: invalid memory address or nil pointer dereference';

/** Which call a run was: what its messages name, and the deadline it had. */
export interface RunContext {
  pluginId: string;
  executable: string;
  volumeId: string | undefined;
  timeoutMs: number;
}

/** The error Go's cmd.Output() returned, as its Error() reads. */
export function goRunError(run: PluginRun, executable: string): string | undefined {
  if (run.spawnError) {
    const code = run.spawnError.code ?? 'EIO';
    return `fork/exec ${executable}: ${goErrnoText(code)}`;
  }
  if (run.timedOut || run.aborted) return 'signal: killed';
  if (run.signal || run.exitCode !== 0) return describeExit(run.exitCode, run.signal);
  return undefined;
}

/** What dhv noticed about a run that a real agent would not say: sockets instead of pipes, a leftover killed at the deadline. */
export function runWarnings(run: PluginRun, timeoutMs: number): string[] {
  const warnings: string[] = [];
  if (run.stdio === 'socket')
    warnings.push(
      "dhv could not make pipes here, so the plugin's stdout and stderr were sockets (a real agent gives pipes)",
    );
  if (run.outputHeldOpen) {
    warnings.push(
      `the plugin exited, but a process it started still held its stdout or stderr at the ${formatMs(timeoutMs)} deadline: dhv killed it; ` +
        'a real agent waits for that process as long as it lives (start helpers with >/dev/null 2>&1)' +
        killedHolders(run.outputHolders),
    );
  }
  if (run.leftRunning !== undefined && run.leftRunning.length > 0) warnings.push(leftRunningWarning(run.leftRunning));
  return warnings;
}

/** What a plugin that exited left running in its process group, which a real agent leaves running. */
export function leftRunningWarning(left: NonNullable<PluginRun['leftRunning']>): string {
  const named = left.map((p) => `process ${p.pid} (${p.command})`).join(', ');
  return (
    `the plugin exited, but left ${named} of its process group running: dhv killed ${left.length === 1 ? 'it' : 'them'}; ` +
    'a real agent leaves them running, one more on the node after every call like this (wait for what the plugin starts, or stop it before exiting)'
  );
}

/** `; killed process 4711 (/usr/bin/sleep), which held stdout and stderr`, one clause per process. */
function killedHolders(holders: PluginRun['outputHolders']): string {
  const byPid = new Map<number, { command: string; holds: string[] }>();
  for (const h of holders) {
    const seen = byPid.get(h.pid) ?? { command: h.command, holds: [] };
    seen.holds.push(h.holds);
    byPid.set(h.pid, seen);
  }
  return [...byPid]
    .map(([pid, h]) => `; killed process ${pid} (${h.command}), which held ${h.holds.join(' and ')}`)
    .join('');
}

/** Builds the run's typed error: the run's details, Nomad's message, dhv's hints and then its warnings. */
type Fail = (
  code: PluginErrorCode,
  nomadMessage: string,
  hints: string[],
  extra?: Partial<PluginRunDetails>,
) => PluginError;

/**
 * How the agent reads a finished run: what the operation decodes to, or a typed error
 * worded as the agent words it (thrown). The checks come in Nomad's order: the run's
 * error before its stdout, and stdout decoded only when the run succeeded. dhv's own cap
 * on stdout comes first, since what was cut off cannot be judged.
 */
export function interpretRun<Op extends Operation>(
  operation: Op,
  run: PluginRun,
  context: RunContext,
): DecodedValue[Op] {
  const fail = failureOf(operation, run, context);
  if (run.stdoutTruncated) throw stdoutCapped(operation, run, context, fail);
  const runError = goRunError(run, context.executable);
  if (runError !== undefined) throw runFailed(operation, run, context, runError, fail);
  return decodedResponse(operation, run, context, fail);
}

function failureOf(
  operation: Operation,
  run: PluginRun,
  { pluginId, executable, volumeId, timeoutMs }: RunContext,
): Fail {
  const details: PluginRunDetails = {
    pluginId,
    executable,
    operation,
    volumeId,
    exitCode: run.exitCode,
    signal: run.signal,
    stdout: outputText(run.stdout),
    stderr: outputText(run.stderr),
    truncated: run.stdoutTruncated || run.stderrTruncated,
    durationMs: run.durationMs,
  };
  const warnings = runWarnings(run, timeoutMs);
  return (code, nomadMessage, hints, extra = {}) =>
    new PluginError(code, nomadMessage, {
      ...details,
      ...(run.spawnProblem ? { spawnProblem: run.spawnProblem } : {}),
      ...extra,
      nomadMessage,
      hints: [...hints, ...warnings],
    });
}

/** `volume "<id>" with plugin "<plugin>"`, as the agent's create and delete errors name a call. */
function volumeWithPlugin({ volumeId, pluginId }: RunContext): string {
  return `volume ${goQuote(volumeId ?? '')} with plugin ${goQuote(pluginId)}`;
}

/** dhv stopped reading stdout at its cap (a real agent reads any amount). */
function stdoutCapped(operation: Operation, run: PluginRun, context: RunContext, fail: Fail): PluginError {
  const what =
    operation === 'fingerprint'
      ? `fingerprinting plugin ${goQuote(context.pluginId)}`
      : `${operation === 'delete' ? 'deleting' : 'creating'} ${volumeWithPlugin(context)}`;
  return fail(
    'PLUGIN_BAD_OUTPUT',
    `error ${what}: dhv stopped reading stdout at ${formatBytes(run.stdout.length)} and killed the plugin`,
    ['a real agent reads any amount; a response is one small JSON document (dhv caps stdout to protect itself)'],
  );
}

/** The run did not exit 0: Go's error for it, with the plugin's {"error"} where the agent reads it. */
function runFailed(
  operation: Operation,
  run: PluginRun,
  context: RunContext,
  runError: string,
  fail: Fail,
): PluginError {
  const code = runFailureCode(run);
  const hints = runFailureHints(run, context);
  const message = decodeErrorOutput(run.stdout, operation);
  const ids = volumeWithPlugin(context);
  switch (operation) {
    case 'fingerprint':
      // On a failed fingerprint the agent does not read stdout; dhv shows the plugin's {"error"} on its own line.
      return fail(
        code,
        `error fingerprinting plugin ${goQuote(context.pluginId)}: ${runError}`,
        [
          ...hints,
          ...(message ? [`the plugin said: ${message} (a real agent ignores a failed fingerprint's stdout)`] : []),
        ],
        { pluginMessage: message, runError },
      );
    case 'delete':
      return fail(
        code,
        message === undefined
          ? `error reading plugin response when deleting ${ids}: original error: ${runError}`
          : `error deleting ${ids}: ${runError}: ${message}`,
        hints,
        { pluginMessage: message, runError },
      );
    default:
      return fail(code, `error creating ${ids}: ${runError}${message === undefined ? '' : `: ${message}`}`, hints, {
        pluginMessage: message,
        runError,
      });
  }
}

function runFailureCode(run: PluginRun): PluginErrorCode {
  if (run.spawnError) return spawnCode(run.spawnError.code);
  if (run.timedOut) return 'PLUGIN_TIMED_OUT';
  if (run.aborted) return 'PLUGIN_ABORTED';
  return 'PLUGIN_FAILED';
}

function runFailureHints(run: PluginRun, { executable, timeoutMs }: RunContext): string[] {
  return [
    ...(run.spawnError ? spawnHints(run, executable) : []),
    ...(run.timedOut
      ? [
          `the plugin ran past its ${formatMs(timeoutMs)} deadline and was killed with its whole process group (a real agent kills only the plugin, then waits for any child still holding its output)`,
          ...loadedMachineHint(),
        ]
      : []),
    ...(run.aborted ? ['cancelled: dhv was stopped while the plugin ran, and killed it'] : []),
  ];
}

/** The run succeeded: stdout decoded as Go decodes it into the operation's response, and what the agent would choke on refused. */
function decodedResponse<Op extends Operation>(
  operation: Op,
  run: PluginRun,
  context: RunContext,
  fail: Fail,
): DecodedValue[Op] {
  const stdout = outputText(run.stdout);
  const shownStdout = `plugin ${context.pluginId}'s stdout was ${JSON.stringify(stdout.length > 200 ? `${stdout.slice(0, 200)}…` : stdout)}`;
  switch (operation) {
    case 'fingerprint':
      return fingerprintResponse(run, context, fail, shownStdout) as DecodedValue[Op];
    case 'create':
      return createResponse(run, context, fail, shownStdout) as DecodedValue[Op];
    default:
      return responseValue('delete', {}) as DecodedValue[Op];
  }
}

function fingerprintResponse(run: PluginRun, { pluginId }: RunContext, fail: Fail, shownStdout: string) {
  const decoded = decodeFingerprintOutput(run.stdout);
  if (!decoded.ok)
    throw fail('PLUGIN_BAD_OUTPUT', `error parsing fingerprint output as json: ${decoded.error}`, [shownStdout]);
  if (!decoded.value.version) {
    throw fail(
      'PLUGIN_BAD_OUTPUT',
      `plugin ${goQuote(pluginId)} fingerprinted without a version: a real Nomad agent crashes here (panic: ${NIL_VERSION_PANIC})`,
      ['dhv skips the plugin instead; print {"version": "0.0.1"} (any version go-version parses)', shownStdout],
      { nomadPanic: NIL_VERSION_PANIC },
    );
  }
  return responseValue('fingerprint', decoded.value);
}

function createResponse(run: PluginRun, context: RunContext, fail: Fail, shownStdout: string) {
  const decoded = decodeCreateOutput(run.stdout);
  if (!decoded.ok)
    throw fail('PLUGIN_BAD_OUTPUT', decoded.error, [
      `(decoding the create response of ${volumeWithPlugin(context)})`,
      shownStdout,
    ]);
  if (decoded.value.path === '') {
    throw fail(
      'PLUGIN_BAD_OUTPUT',
      `plugin ${goQuote(context.pluginId)} created volume ${goQuote(context.volumeId ?? '')} without a "path"`,
      [
        'a real Nomad agent accepts this and publishes a volume with an empty path, which no workload can mount; print {"path": "/abs/dir", "bytes": N}',
        shownStdout,
      ],
    );
  }
  return responseValue('create', decoded.value);
}

function spawnCode(errno: string | undefined): PluginErrorCode {
  switch (errno) {
    case 'ENOENT':
      return 'PLUGIN_NOT_FOUND';
    case 'EACCES':
    case 'ENOEXEC':
      return 'PLUGIN_NOT_EXECUTABLE';
    default:
      return 'PLUGIN_SPAWN_FAILED';
  }
}

function formatMs(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

function formatBytes(n: number): string {
  return n >= 1024 * 1024 && n % (1024 * 1024) === 0 ? `${n / (1024 * 1024)} MiB` : `${n} bytes`;
}
