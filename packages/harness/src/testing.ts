/**
 * What tests import, and nothing that ships in `dhv` does (lint's production-imports-no-test-seam):
 * the conformance catalogue as tests in a plugin project's own suite
 * (`import { conformanceTests } from '@dhv/harness/testing'`), a fake plugin runner, and a
 * seeded data dir. Loads no CLI.
 */
export { conformanceTests, type ConformanceTestOptions, type TestFunctions } from './conformance/test-api.js';
export { runConformance, type RunOptions, type ProgressEvent } from './conformance/runner.js';
export type { CheckResult, ConformanceReport, SuiteSettings } from './conformance/types.js';
/** A plugin runner in process (scriptable answers, recorded calls), to test the agent's rules without plugin processes. */
export { FakePluginRunner, type FakeRun } from './runner/fake-runner.js';
/** A data dir holding the records of many volumes, as their creates would have left it: to time or test a restore at scale (the restart bench). */
export { seedVolumes, type SeedVolume } from './test-seams/seed-volumes.js';
