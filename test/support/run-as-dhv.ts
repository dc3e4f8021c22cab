import { builtinFirst } from '@dhv/harness';
import { valueWithRun, type execPlugin } from '@dhv/sdk/client';

/** The runner the agent uses: the built-in mkdir in process, every other plugin as a program. */
const runner = builtinFirst();

/**
 * One plugin call through the door dhv itself uses (the agent's runner, the harness's
 * process runner behind it), with execPlugin's arguments, result and thrown PluginError:
 * a test of what dhv does goes through dhv's path. Tests of execPlugin itself, the SDK's
 * API for plugin authors, call it directly.
 */
export const runAsDhv: typeof execPlugin = async (plugin, operation, request, options = {}) =>
  valueWithRun(await runner.run(operation, { plugin, request, ...options }));
