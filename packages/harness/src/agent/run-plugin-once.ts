import { randomUUID } from 'node:crypto';
import { isAbsolute, resolve } from 'node:path';
import { AGENT_TIMEOUT_MS, ENV, isOperation, type Operation } from '@dhv/sdk';
import { runDetails, type OperationResult, type PluginRunResult, type PluginRunner } from '@dhv/sdk/client';
import { processRunner } from '../runner/process-runner.js';
import { builtinFirst, isBuiltinPlugin } from './plugins.js';

export interface PluginRunInput {
  /** A path to an executable (anything with a `/`), or a plugin ID looked up in `pluginDir` (`mkdir` is the built-in). */
  plugin: string;
  operation: string;
  pluginDir: string;
  volumesDir: string;
  nodeId: string;
  nodePool: string;
  volumeId?: string | undefined;
  name?: string | undefined;
  namespace?: string | undefined;
  capacityMinBytes?: bigint | undefined;
  capacityMaxBytes?: bigint | undefined;
  parameters?: Record<string, string> | null | undefined;
  createdPath?: string | undefined;
  timeoutMs?: number | undefined;
  signal?: AbortSignal | undefined;
  cwd?: string | undefined;
  /** How plugins other than the built-in run (default: as processes); a test hands in a fake. */
  runner?: PluginRunner | undefined;
}

/** How a run of an operation outside the protocol ended: nothing is decoded. */
export interface RawExit {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  spawnError?: string;
}

/** `dhv plugin run`'s run: a protocol operation's result, or the raw exit of any other. */
export type PluginRunOnce = OperationResult<Operation> | PluginRunResult<RawExit>;

/**
 * Runs one operation exactly as an agent would, for `dhv plugin run`: through the agent's
 * runner (the built-in in process, any other plugin as a program), with the agent's
 * environment and timeouts. An operation the protocol does not have is still run (raw),
 * to see how a plugin answers it.
 */
export async function runPluginOnce(input: PluginRunInput): Promise<PluginRunOnce> {
  const runner = builtinFirst(input.runner);
  const byPath = input.plugin.includes('/');
  const plugin = byPath
    ? isAbsolute(input.plugin)
      ? input.plugin
      : resolve(input.cwd ?? process.cwd(), input.plugin)
    : { pluginDir: input.pluginDir, pluginId: input.plugin };
  if (!isOperation(input.operation)) {
    const executable = typeof plugin === 'string' ? plugin : await runner.lookup(input.pluginDir, input.plugin);
    return runRaw(input, executable, byPath ? executable.split('/').pop()! : input.plugin);
  }
  return runner.run(input.operation, {
    plugin,
    request: {
      volumesDir: input.volumesDir,
      pluginDir: input.pluginDir,
      namespace: input.namespace ?? 'default',
      volumeName: input.name ?? 'dhv-plugin-run',
      volumeId: input.volumeId ?? randomUUID(),
      nodeId: input.nodeId,
      nodePool: input.nodePool,
      capacityMinBytes: input.capacityMinBytes ?? 0n,
      capacityMaxBytes: input.capacityMaxBytes ?? 0n,
      parameters: input.parameters ?? null,
      createdPath: input.createdPath ?? '',
    },
    timeoutMs: input.timeoutMs,
    signal: input.signal,
    cwd: input.cwd,
  });
}

async function runRaw(input: PluginRunInput, executable: string, pluginId: string): Promise<PluginRunResult<RawExit>> {
  const timeoutMs = input.timeoutMs ?? AGENT_TIMEOUT_MS.create;
  const run = await processRunner.runRaw(
    executable,
    [input.operation],
    { [ENV.operation]: input.operation },
    { timeoutMs, signal: input.signal, cwd: input.cwd },
  );
  const details = runDetails(run, { pluginId, executable, operation: input.operation, timeoutMs });
  return {
    ...details,
    builtin: isBuiltinPlugin(input.plugin),
    ok: true,
    value: {
      exitCode: run.exitCode,
      signal: run.signal,
      timedOut: run.timedOut,
      ...(run.spawnError ? { spawnError: run.spawnError.message } : {}),
    },
  };
}
