/**
 * `@dhv/sdk/client`, the agent side: run any plugin exactly the way a Nomad client agent
 * does, and decode what it prints. The protocol's names and types are in `@dhv/sdk`.
 */
export { pluginTrustWarnings, writableByOthers } from './client/plugin-trust.js';
export { execPlugin } from './client/exec-plugin.js';
export type {
  ExecOptions,
  ExecResult,
  FingerprintResult,
  CreateResult,
  DeleteResult,
  ResultByOperation,
} from './client/exec-plugin.js';
export type { PluginRunner } from './client/plugin-runner.js';
export type { PluginCall, PluginRef } from './client/plugin-call.js';
export { ProcessRunner, type ProcessRunnerOptions } from './client/process-runner.js';
export {
  judgeRun,
  runDetails,
  runInProcess,
  valueOf,
  valueWithRun,
  type OperationResult,
  type PluginRunResult,
  type RunDetails,
  type RunWithValue,
} from './client/run-result.js';
export type { DecodedValue } from './client/decoded-value.js';
export {
  interpretRun,
  goRunError,
  leftRunningWarning,
  runWarnings,
  NIL_VERSION_PANIC,
  type RunContext,
} from './client/interpret-run.js';
export { spawnPlugin, DEFAULT_MAX_OUTPUT_BYTES, type SpawnOptions } from './client/spawn-plugin.js';
export { pluginRunOf, outputText, type PluginRun, type LeftRunning, type OutputHolder } from './client/plugin-run.js';
export { buildEnvironment, type RequestInput } from './client/environment.js';
export {
  fingerprintRequest,
  createRequest,
  restoreRequest,
  deleteRequest,
  cleanupDeleteRequest,
  type AgentFields,
  type VolumeFields,
  type CapacityFields,
  type DeleteFor,
} from './client/agent-requests.js';
export { loadedMachineHint } from './client/machine-load.js';
export { execKind, describeFileType, O_PATH, type ExecKind } from './client/exec-format.js';
export { diagnoseExecutable, type SpawnDiagnosis } from './client/spawn-diagnosis.js';
export { PluginError, describeExit, type PluginErrorCode, type PluginRunDetails } from './client/errors.js';
export { resolvePlugin, openPlugin, closePluginHandle, type PluginHandle } from './client/resolve-plugin.js';
export {
  discoverPlugins,
  BUILTIN_MKDIR_ID,
  type Discovery,
  type DiscoveredPlugin,
  type SkippedPlugin,
  type DiscoverOptions,
  type AgentLogLine,
} from './client/discover-plugins.js';
export {
  decodeResponse,
  decodeCreateOutput,
  decodeFingerprintOutput,
  decodeErrorOutput,
  type Decoded,
  type DecodedCreate,
  type DecodedFingerprint,
} from './protocol/decode.js';
export {
  responseValue,
  answeredValue,
  type DecodedResponse,
  type ResponseAnswer,
  type ResponseValue,
  type ResponseByOperation,
} from './protocol/response.js';
export { RESPONSE_FIELDS, ERROR_FIELD, type GoKind, type ResponseField } from './protocol/response-fields.js';
export { parseGoJson, GoJsonSyntaxError, type GoJsonValue } from './go/json.js';
export { goMarshalStringMap, goMarshalString } from './go/json-marshal.js';
export { goKeyMatches, goInt64 } from './go/json-unmarshal.js';
export { goQuote } from './go/strconv.js';
export { goParseUint, goAtoi, goParseInt, goParseFloat, goParseBool, type GoParsed } from './go/strconv-parsers.js';
export { goSyscallMode } from './go/file-mode.js';
export { goErrnoText } from './go/errno.js';
export { decodeJson } from './protocol/bigint-json-decode.js';
