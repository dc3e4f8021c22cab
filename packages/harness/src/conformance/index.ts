/** The conformance suite: a catalogue of named checks, a runner, reporters, and a test API. */
export { CATALOGUE } from './catalogue/index.js';
export { runConformance, withExtraChecks, DEFAULT_JOBS, type RunOptions, type ProgressEvent } from './runner.js';
export { verdictOf } from './policy.js';
export { conformanceTests, type ConformanceTestOptions, type TestFunctions } from './test-api.js';
export { selectChecks, UnknownCheckError } from './select.js';
export {
  resolveSettings,
  parseParameterPairs,
  InvalidSettingsError,
  DEFAULT_REPEAT,
  DEFAULT_EXPLORE_RUNS,
  MAX_EXPLORE_RUNS,
  type SettingsInput,
} from './settings.js';
export { formatHuman, formatProgressLine, formatResult, formatSummary, type TextStyle } from './report/human.js';
export { formatJUnit, formatJUnitError } from './report/junit.js';
export { PluginMissingError, PluginNotRunnableError } from './missing-plugin.js';
export { HELD_OUTPUT_GRACE_MS } from './held-output.js';
export { formatJson } from './report/json.js';
export { forceRemove } from './scratch-dirs.js';
export {
  AREAS,
  FEATURES,
  type Area,
  type Check,
  type CheckContext,
  type CheckResult,
  type ConformanceReport,
  type Severity,
  type Status,
  type SuiteSettings,
} from './types.js';
export { readCheckConfig, runCommands, SetupCommandError, type CheckConfig } from './config-file.js';
