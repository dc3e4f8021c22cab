import type { Operation } from '../protocol/operations.js';
import type { Discovery } from './discover-plugins.js';
import type { PluginCall } from './plugin-call.js';
import type { OperationResult } from './run-result.js';

/**
 * The one door every plugin call goes through (the agent, `dhv plugin run`, `dhv check`,
 * gc, `dhv build`'s smoke test, `execPlugin`). The SDK's `ProcessRunner` runs plugins as
 * programs; the harness adds the built-in mkdir, run in process, and a fake for tests.
 */
export interface PluginRunner {
  run<Op extends Operation>(operation: Op, call: PluginCall<Op>): Promise<OperationResult<Op>>;
  /** Finds a plugin without running it: its executable, or the agent's lookup error (a PluginError). */
  lookup(pluginDir: string, pluginId: string): Promise<string>;
  /** Discovery at start or reload: every candidate in the dir fingerprinted, failures skipped with the reason. */
  discover(pluginDir: string, options?: { signal?: AbortSignal | undefined }): Promise<Discovery>;
}
