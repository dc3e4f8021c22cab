import { builtinFirst } from '@dhv/harness';
import type { Operation } from '@dhv/sdk';
import { valueWithRun, type ExecOptions, type ExecResult, type PluginRef, type RequestInput } from '@dhv/sdk/client';

/** The runner the agent uses: the built-in mkdir in process, every other plugin as a program. */
const runner = builtinFirst();

/**
 * One plugin call through the door dhv itself uses (the agent's runner, the harness's
 * process runner behind it), with execPlugin's arguments, result and thrown PluginError:
 * a test of what dhv does goes through dhv's path. Tests of execPlugin itself, the SDK's
 * API for plugin authors, call it directly.
 */
export async function runAsDhv<Op extends Operation>(
  plugin: string | PluginRef,
  operation: Op,
  request: RequestInput<Op>,
  options: ExecOptions = {},
): Promise<ExecResult<Op>> {
  return valueWithRun(await runner.run(operation, { plugin, request, ...options }));
}
