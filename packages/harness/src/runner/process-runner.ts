import { basename } from 'node:path';
import { CleanupJournal } from '@dhv/sdk/host';
import { AGENT_TIMEOUT_MS, type Operation } from '@dhv/sdk';
import {
  PluginError,
  buildEnvironment,
  closePluginHandle,
  discoverPlugins,
  interpretRun,
  openPlugin,
  outputText,
  pickResponseValue,
  resolvePlugin,
  runWarnings,
  spawnPlugin,
  type PluginHandle,
  type PluginRun,
  type SpawnOptions,
} from '@dhv/sdk/client';
import {
  noProcessOutput,
  type DecodedValue,
  type OperationResult,
  type PluginCall,
  type PluginRunner,
  type RunDetails,
} from './plugin-runner.js';

/** Where the process groups of the plugins run are recorded while they run, when a command asked for it. */
let journal: CleanupJournal | undefined;

/**
 * Records every plugin's process group in this process's cleanup journal while it runs,
 * so that a dhv killed outright has its plugins killed by the next dhv command (what
 * `dhv check` and `dhv demo` ask for; agent commands keep Nomad's behaviour).
 */
export function journalProcessGroups(): CleanupJournal {
  journal = CleanupJournal.forThisProcess();
  return journal;
}

function recordGroup(pgid: number, exited: boolean): void {
  if (exited) journal?.forgetProcessGroup(pgid);
  else journal?.recordProcessGroup(pgid);
}

/**
 * Every plugin run as a program, exactly as a Nomad agent runs it: the agent's environment
 * and deadlines, the output decoded as Go decodes it, failures as the SDK's PluginError.
 * The only module of the harness that spawns plugins (lint: runner-only-spawns).
 */
export const processRunner: PluginRunner = {
  async run<Op extends Operation>(operation: Op, call: PluginCall<Op>): Promise<OperationResult<Op>> {
    const ref = typeof call.plugin === 'string' ? undefined : call.plugin;
    let handle: PluginHandle | undefined;
    try {
      handle = ref ? openPlugin(ref.pluginDir, ref.pluginId) : undefined;
    } catch (err) {
      if (err instanceof PluginError) return notRun(operation, err) as OperationResult<Op>;
      throw err;
    }
    try {
      const executable = handle ? handle.executable : (call.plugin as string);
      const pluginId = ref?.pluginId ?? call.pluginId ?? basename(executable);
      const request =
        ref && (call.request as { pluginDir?: string }).pluginDir === undefined
          ? { ...call.request, pluginDir: ref.pluginDir }
          : call.request;
      const timeoutMs = call.timeoutMs ?? AGENT_TIMEOUT_MS[operation];
      const run = await spawnPlugin(executable, [operation], buildEnvironment(operation, request, executable), {
        timeoutMs,
        signal: call.signal,
        cwd: call.cwd,
        fd: handle?.fd,
        outputGraceMs: call.outputGraceMs,
        onProcessGroup: journal && recordGroup,
      });
      const details = runDetails(run, { pluginId, executable, operation, timeoutMs });
      const volumeId = (call.request as { volumeId?: string }).volumeId;
      try {
        const decoded = interpretRun(operation, run, { pluginId, executable, volumeId, timeoutMs });
        return { ...details, ok: true, value: decodedValue(operation, decoded) } as OperationResult<Op>;
      } catch (err) {
        if (err instanceof PluginError) return { ...details, ok: false, error: err } as OperationResult<Op>;
        throw err;
      }
    } finally {
      if (handle) closePluginHandle(handle);
    }
  },
  lookup: (pluginDir, pluginId) => resolvePlugin(pluginDir, pluginId),
  discover: (pluginDir, options = {}) => discoverPlugins(pluginDir, options.signal ? { signal: options.signal } : {}),
};

/**
 * A plugin run with any argv and environment, judged by nobody: what the conformance checks
 * probe a plugin with, and `dhv plugin run` of an operation outside the protocol.
 */
export function runPluginRaw(
  executable: string,
  argv: readonly string[],
  env: Record<string, string>,
  options: SpawnOptions,
): Promise<PluginRun> {
  return spawnPlugin(executable, argv, env, { ...options, onProcessGroup: journal && recordGroup });
}

/**
 * How the agent reads a run of a protocol operation: the decoded value, or the error in
 * its words. `dhv replay` judges a recorded answer and a replayed one through this, so
 * both are read the same way.
 */
export function judgeRun<Op extends Operation>(
  operation: Op,
  run: PluginRun,
  context: { pluginId: string; executable: string; volumeId: string | undefined; timeoutMs: number },
): { ok: true; value: DecodedValue[Op] } | { ok: false; error: PluginError } {
  try {
    return { ok: true, value: decodedValue(operation, interpretRun(operation, run, context)) };
  } catch (err) {
    if (err instanceof PluginError) return { ok: false, error: err };
    throw err;
  }
}

/** What a run reports of itself, whatever it decoded to. */
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

/** A call that failed before anything ran (the plugin was not found or cannot run). */
export function notRun(operation: string, error: PluginError): OperationResult<Operation> {
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

/** Only what the operation decodes to, without the run's bookkeeping the SDK's result carries. */
function decodedValue<Op extends Operation>(operation: Op, decoded: object): DecodedValue[Op] {
  return pickResponseValue(operation, decoded);
}
