import { randomUUID } from 'node:crypto';
import { isAbsolute, resolve } from 'node:path';
import { AGENT_TIMEOUT_MS, ENV, isOperation, type CreateRequest, type DeleteRequest } from '@dhv/sdk';
import {
  BUILTIN_MKDIR_ID,
  DEFAULT_MAX_OUTPUT_BYTES,
  buildEnvironment,
  execPlugin,
  resolvePlugin,
  spawnPlugin,
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

export interface PluginRunOutcome {
  pluginId: string;
  executable: string;
  builtin: boolean;
  operation: string;
  /** Exactly what the plugin was given (the built-in gets the same request in process). */
  environment: Record<string, string>;
  /** The decoded response: `{version}`, `{path, bytes}`, `{}`; or the raw exit of an unknown operation. */
  result: Record<string, unknown>;
  durationMs: number;
  stdout: string;
  stderr: string;
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
  if (!isOperation(input.operation)) {
    const environment = { [ENV.operation]: input.operation };
    const run = await spawnPlugin(executable, [input.operation], environment, {
      timeoutMs: input.timeoutMs ?? AGENT_TIMEOUT_MS.create,
      signal: input.signal,
      maxOutputBytes: DEFAULT_MAX_OUTPUT_BYTES,
      cwd: input.cwd,
    });
    return {
      ...base,
      environment,
      result: {
        exitCode: run.exitCode,
        signal: run.signal,
        timedOut: run.timedOut,
        ...(run.spawnError ? { spawnError: run.spawnError.message } : {}),
      },
      durationMs: run.durationMs,
      stdout: run.stdout.toString('utf8'),
      stderr: run.stderr.toString('utf8'),
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
    return { ...base, environment, result, durationMs: performance.now() - started, stdout: '', stderr: '' };
  }
  const options = {
    ...(input.timeoutMs !== undefined ? { timeoutMs: input.timeoutMs } : {}),
    ...(input.signal ? { signal: input.signal } : {}),
    ...(input.cwd ? { cwd: input.cwd } : {}),
    pluginId,
  };
  const run = await execPlugin(executable, operation, request, options);
  return {
    ...base,
    environment,
    result: decodedFields(run),
    durationMs: run.durationMs,
    stdout: run.stdout,
    stderr: run.stderr,
  };
}

/** Only the fields the agent decodes from stdout, without the run's bookkeeping. */
function decodedFields(run: { stdout: string; stderr: string; durationMs: number }): Record<string, unknown> {
  const r = run as unknown as Record<string, unknown>;
  if ('version' in r) return { version: r.version, rawVersion: r.rawVersion };
  if ('path' in r) return { path: r.path, bytes: r.bytes };
  return {};
}
