/**
 * The conformance catalogue as tests in a plugin project's own suite:
 * `import { conformanceTests } from '@dhv/harness/testing'`. Loads neither the CLI nor
 * the simulated agent.
 */
export { conformanceTests, type ConformanceTestOptions, type TestFunctions } from './conformance/test-api.js';
export { runConformance, type RunOptions, type ProgressEvent } from './conformance/runner.js';
export type { CheckResult, ConformanceReport, SuiteSettings } from './conformance/types.js';
/** A plugin runner in process (scriptable answers, recorded calls), to test the agent's rules without plugin processes. */
export { FakePluginRunner, type FakeRun } from './runner/fake-runner.js';
export type {
  PluginRunner,
  PluginCall,
  PluginRunResult,
  OperationResult,
  RunDetails,
  DecodedValue,
} from './runner/plugin-runner.js';
