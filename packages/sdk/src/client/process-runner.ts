import type { Operation } from '../protocol/operations.js';
import { discoverPlugins, type Discovery } from './discover-plugins.js';
import { callPlugin, type PluginCall } from './plugin-call.js';
import type { PluginRun } from './plugin-run.js';
import type { PluginRunner } from './plugin-runner.js';
import { prepareOutputPipes } from './plugin-output.js';
import { resolvePlugin } from './resolve-plugin.js';
import type { OperationResult } from './run-result.js';
import { spawnPlugin, type SpawnOptions } from './spawn-plugin.js';

export interface ProcessRunnerOptions {
  /**
   * Told of every plugin's process group while it runs (`exited: false` at the start, `true`
   * once it is over): a caller keeping a cleanup journal records it in between, so that
   * whoever finds the caller killed can kill its plugins.
   */
  onProcessGroup?: ((pgid: number, exited: boolean) => void) | undefined;
}

/**
 * Every plugin run as a program, exactly as a Nomad agent runs it: the agent's lookup,
 * environment and deadlines, the output decoded as Go decodes it, failures as the
 * result's PluginError. With the SDK's other client modules, the only code that spawns
 * plugins (lint: sdk-client-only-spawns).
 */
export class ProcessRunner implements PluginRunner {
  private readonly onProcessGroup: ProcessRunnerOptions['onProcessGroup'];

  constructor(options: ProcessRunnerOptions = {}) {
    this.onProcessGroup = options.onProcessGroup;
  }

  run<Op extends Operation>(operation: Op, call: PluginCall<Op>): Promise<OperationResult<Op>> {
    return callPlugin(operation, call, this.onProcessGroup);
  }

  async lookup(pluginDir: string, pluginId: string): Promise<string> {
    const executable = await resolvePlugin(pluginDir, pluginId);
    // A plugin looked up is run next, after the caller's locks: its pipes are made meanwhile.
    prepareOutputPipes();
    return executable;
  }

  discover(pluginDir: string, options: { signal?: AbortSignal | undefined } = {}): Promise<Discovery> {
    return discoverPlugins(pluginDir, options.signal ? { signal: options.signal } : {});
  }

  /**
   * A plugin run with any argv and environment, judged by nobody: what the conformance
   * checks probe a plugin with, `dhv replay`'s recorded calls, and an operation outside
   * the protocol.
   */
  runRaw(
    executable: string,
    argv: readonly string[],
    env: Record<string, string>,
    options: Omit<SpawnOptions, 'onProcessGroup'>,
  ): Promise<PluginRun> {
    return spawnPlugin(executable, argv, env, { ...options, onProcessGroup: this.onProcessGroup });
  }
}
