/**
 * What a plugin imports. Kept free of zod and other heavy modules at load time: a
 * plugin's start-up is part of its 1 s fingerprint budget.
 */
export { definePlugin, EXIT_FAILURE, EXIT_USAGE } from './runtime/define-plugin.js';
export type {
  DeleteHandlerRequest,
  HandlerContext,
  Invocation,
  InvocationResult,
  Plugin,
  PluginDefinition,
} from './runtime/define-plugin.js';
export {
  OPERATIONS,
  AGENT_TIMEOUT_MS,
  AGENT_RESTORE_DEADLINE_MS,
  ABORT_MARGIN_MS,
  isOperation,
  type Operation,
} from './protocol/operations.js';
export { ENV, REQUEST_FIELDS, NULL_PARAMETERS, type RequestField, type EnvName } from './protocol/variables.js';
export { isUuid, UUID_PATTERN } from './protocol/uuid.js';
export type {
  CreateRequest,
  DeleteRequest,
  FingerprintRequest,
  Parameters,
  RequestByOperation,
} from './protocol/request.js';
export type { CreateResponse, FingerprintResponse, DeleteResponse, ErrorResponse } from './protocol/response.js';
export { PluginFailure } from './helpers/errors.js';
export { UndoStack } from './runtime/undo-stack.js';
export { InjectedFault, INJECTED_FAILURE, FAIL_AT_VARIABLE, type FaultPoint } from './helpers/fault-injection.js';
export { volumePath, expectCreatedPath, isStrictlyInside } from './helpers/paths.js';
export {
  findTool,
  runTool,
  SYSTEM_DIRS,
  TOOL_ENV,
  type ToolResult,
  type RunToolOptions,
} from './helpers/system-tools.js';
export { diskSpace, type DiskSpace } from './helpers/disk-space.js';
export * as fsCalls from './helpers/fs-calls.js';
export {
  withVolumeLock,
  acquireVolumeLock,
  removeFreeLock,
  isFreeLock,
  lockHolderPid,
  type LockOptions,
} from './helpers/volume-lock.js';
export {
  parseModeParameter,
  parseOwnerParameter,
  readMkdirParameter,
  DEFAULT_VOLUME_MODE,
  type ParsedParameter,
} from './helpers/ownership.js';
export {
  parameterSchema,
  type ParameterSchema,
  type ParameterField,
  type ParameterFields,
  type ParameterValues,
} from './helpers/parameter-schema.js';
/** The kinds of parameter a schema declares: `param.choice`, `param.flag`, `param.mkdirMode`, … */
export * as param from './helpers/parameter-fields.js';
export { pickCapacity, type CapacityRules } from './helpers/capacity.js';
export { parseSize, parseByteSize, goParseBytes, formatSize, SizeError, INT64_MAX } from './go/humanize.js';
export { parseGoVersion, isGoVersion, type GoVersion, type GoVersionResult } from './go/version.js';
