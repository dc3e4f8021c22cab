import { basename } from 'node:path';
import { AGENT_TIMEOUT_MS, type Operation } from '../protocol/operations.js';
import { buildEnvironment, type RequestInput } from './environment.js';
import { PluginError } from './errors.js';
import { closePluginHandle, openPlugin, type PluginHandle } from './resolve-plugin.js';
import { judgeRun, notRun, runDetails, type OperationResult } from './run-result.js';
import { spawnPlugin, type SpawnOptions } from './spawn-plugin.js';

/** A plugin as the agent names it: an ID looked up in the plugin dir (never outside it). */
export interface PluginRef {
  pluginDir: string;
  pluginId: string;
}

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
  /** How much of stdout and of stderr to keep; more stdout than this fails the call. Default 4 MiB. */
  maxOutputBytes?: number | undefined;
  /** How long output a leftover process holds after the plugin exited is waited for. Default: the deadline. */
  outputGraceMs?: number | undefined;
}

/**
 * One plugin call run as a program, exactly as a Nomad agent runs it: looked up in the
 * plugin dir (the file checked is the file run), the agent's environment and deadline,
 * the output judged as the agent judges it. Every failure is the result's PluginError.
 */
export async function callPlugin<Op extends Operation>(
  operation: Op,
  call: PluginCall<Op>,
  onProcessGroup?: SpawnOptions['onProcessGroup'],
): Promise<OperationResult<Op>> {
  const ref = typeof call.plugin === 'string' ? undefined : call.plugin;
  let handle: PluginHandle | undefined;
  try {
    handle = ref ? openPlugin(ref.pluginDir, ref.pluginId) : undefined;
  } catch (err) {
    if (err instanceof PluginError) return notRun(operation, err);
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
      maxOutputBytes: call.maxOutputBytes,
      cwd: call.cwd,
      fd: handle?.fd,
      outputGraceMs: call.outputGraceMs,
      onProcessGroup,
    });
    const volumeId = (call.request as { volumeId?: string }).volumeId;
    const context = { pluginId, executable, volumeId, timeoutMs };
    return { ...runDetails(run, { ...context, operation }), ...judgeRun(operation, run, context) };
  } finally {
    if (handle) closePluginHandle(handle);
  }
}
