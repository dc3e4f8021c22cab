import type { CreateRequest, DeleteRequest, Operation } from '@dhv/sdk';
import {
  BUILTIN_MKDIR_ID,
  answeredValue,
  buildEnvironment,
  runInProcess,
  type DecodedValue,
  type OperationResult,
  type PluginCall,
  type PluginRunner,
  type RequestInput,
} from '@dhv/sdk/client';
import { BUILTIN_EXECUTABLE, BUILTIN_MKDIR_VERSION, builtinMkdirCreate, builtinMkdirDelete } from './builtin-mkdir.js';

/**
 * Nomad's built-in mkdir as a runner like any other: run in process, it answers with the
 * same result shape a plugin process does (no output, no exit), and discovery always
 * finds it.
 */
export const builtinMkdirRunner: PluginRunner = {
  run<Op extends Operation>(operation: Op, call: PluginCall<Op>): Promise<OperationResult<Op>> {
    const pluginDir = typeof call.plugin === 'string' ? '' : call.plugin.pluginDir;
    const answered = {
      pluginId: BUILTIN_MKDIR_ID,
      executable: BUILTIN_EXECUTABLE,
      builtin: true,
      operation,
      // Built on demand (never spread): a restore of thousands of volumes never reads it.
      get environment() {
        return buildEnvironment(operation, call.request, `${pluginDir}/${BUILTIN_MKDIR_ID}`);
      },
    };
    return runInProcess(answered, () => builtinValue(operation, call.request));
  },
  lookup: () => Promise.resolve(BUILTIN_EXECUTABLE),
  discover: () =>
    Promise.resolve({
      plugins: [
        {
          id: BUILTIN_MKDIR_ID,
          executable: BUILTIN_EXECUTABLE,
          version: BUILTIN_MKDIR_VERSION,
          durationMs: 0,
          stderr: '',
          warnings: [],
        },
      ],
      skipped: [],
      logs: [],
    }),
};

async function builtinValue<Op extends Operation>(operation: Op, request: RequestInput<Op>): Promise<DecodedValue[Op]> {
  switch (operation) {
    case 'fingerprint':
      return answeredValue('fingerprint', {
        version: BUILTIN_MKDIR_VERSION,
        rawVersion: BUILTIN_MKDIR_VERSION,
      }) as DecodedValue[Op];
    case 'create':
      return answeredValue('create', await builtinMkdirCreate(request as unknown as CreateRequest)) as DecodedValue[Op];
    default:
      await builtinMkdirDelete(request as unknown as DeleteRequest);
      return {} as DecodedValue[Op];
  }
}
