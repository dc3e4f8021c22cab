import { randomUUID } from 'node:crypto';
import { isAbsolute, resolve } from 'node:path';
import { AGENT_TIMEOUT_MS, ENV, isOperation, type CreateRequest, type DeleteRequest } from '@dhv/sdk';
import {
  BUILTIN_MKDIR_ID,
  buildEnvironment,
  interpretRun,
  outputText,
  resolvePlugin,
  runWarnings,
  spawnPlugin,
  type PluginRun,
} from '@dhv/sdk/client';
import { BUILTIN_EXECUTABLE, builtinMkdirCreate, builtinMkdirDelete } from './builtin-mkdir.js';
import { isBuiltinPlugin } from './plugins.js';

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
}

/** What `dhv plugin run` reports: the run, its output as text, and what the agent decoded from it. */
export interface PluginRunOutcome extends Pick<PluginRun, 'durationMs' | 'outputHeldOpen' | 'outputHolders'> {
  pluginId: string;
  executable: string;
  builtin: boolean;
  operation: string;
  /** Exactly what the plugin was given (the built-in gets the same request in process). */
  environment: Record<string, string>;
  /** The decoded response: `{version}`, `{path, bytes}`, `{}`; or the raw exit of an unknown operation. */
  result: Record<string, unknown>;
  stdout: string;
  stderr: string;
  /** What dhv noticed that a real agent would not say (a leftover process killed at the deadline). */
  warnings: string[];
}

/**
 * Runs one operation exactly as an agent would, for `dhv plugin run`: the agent's
 * environment and timeouts, decoded output, the SDK's typed PluginError on failure.
 * An operation the protocol does not have is still run (raw), to see how a plugin
 * answers it.
 */
export async function runPluginOnce(input: PluginRunInput): Promise<PluginRunOutcome> {
  const builtin = isBuiltinPlugin(input.plugin);
  const looksLikePath = input.plugin.includes('/');
  const executable = builtin
    ? BUILTIN_EXECUTABLE
    : looksLikePath
      ? isAbsolute(input.plugin)
        ? input.plugin
        : resolve(input.cwd ?? process.cwd(), input.plugin)
      : await resolvePlugin(input.pluginDir, input.plugin);
  const pluginId = builtin || !looksLikePath ? input.plugin : executable.split('/').pop()!;
  const request = {
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
  };
  const started = performance.now();
  const base = { pluginId, executable, builtin, operation: input.operation };
  const timeoutMs = input.timeoutMs ?? AGENT_TIMEOUT_MS[isOperation(input.operation) ? input.operation : 'create'];
  const spawn = (environment: Record<string, string>) =>
    spawnPlugin(executable, [input.operation], environment, { timeoutMs, signal: input.signal, cwd: input.cwd });
  const ran = (run: PluginRun) => ({
    environment: { ...run.env },
    durationMs: run.durationMs,
    stdout: outputText(run.stdout),
    stderr: outputText(run.stderr),
    outputHeldOpen: run.outputHeldOpen,
    outputHolders: run.outputHolders,
    warnings: runWarnings(run, timeoutMs),
  });
  if (!isOperation(input.operation)) {
    const run = await spawn({ [ENV.operation]: input.operation });
    return {
      ...base,
      ...ran(run),
      result: {
        exitCode: run.exitCode,
        signal: run.signal,
        timedOut: run.timedOut,
        ...(run.spawnError ? { spawnError: run.spawnError.message } : {}),
      },
    };
  }
  const operation = input.operation;
  const environment = buildEnvironment(
    operation,
    request,
    builtin ? `${input.pluginDir}/${BUILTIN_MKDIR_ID}` : executable,
  );
  if (builtin) {
    const result: Record<string, unknown> =
      operation === 'fingerprint'
        ? { version: '0.0.1' }
        : operation === 'create'
          ? { ...(await builtinMkdirCreate(request as CreateRequest)) }
          : (await builtinMkdirDelete(request as DeleteRequest), {});
    const durationMs = performance.now() - started;
    const quiet = { stdout: '', stderr: '', outputHeldOpen: false, outputHolders: [], warnings: [] };
    return { ...base, environment, result, durationMs, ...quiet };
  }
  const run = await spawn(environment);
  const decoded = interpretRun(operation, run, { pluginId, executable, volumeId: request.volumeId, timeoutMs });
  return { ...base, ...ran(run), result: decodedFields(decoded) };
}

/** Only the fields the agent decodes from stdout, without the run's bookkeeping. */
function decodedFields(run: object): Record<string, unknown> {
  const r = run as Record<string, unknown>;
  if ('version' in r) return { version: r.version, rawVersion: r.rawVersion };
  if ('path' in r) return { path: r.path, bytes: r.bytes };
  return {};
}
