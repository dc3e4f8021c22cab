import { CATALOGUE } from './catalogue/index.js';
import { selectChecks } from './select.js';
import { ConformanceSession } from './session.js';
import { resolveSettings, type SettingsInput } from './settings.js';
import { AREAS, type CheckResult } from './types.js';

/** The parts of vitest (or jest, or node:test's shape) the test API uses; passed in so the harness never loads a test runner itself. */
export interface TestFunctions {
  describe: (name: string, body: () => void) => void;
  test: (name: string, body: (context: { skip: (note?: string) => void }) => Promise<void>, timeoutMs?: number) => void;
  afterAll: (fn: () => Promise<void>, timeoutMs?: number) => void;
}

export interface ConformanceTestOptions extends SettingsInput, TestFunctions {
  /** The plugin executable to check. */
  plugin: string;
  only?: readonly string[];
  skip?: readonly string[];
  volumesDir?: string;
  /** Treat recommended checks' failures as test failures too (default: they only warn). */
  strict?: boolean;
  /** Called with each result, e.g. to print warnings. */
  onResult?: (result: CheckResult) => void;
}

/** Time allowed per test: two create/delete budgets cover the slowest check. */
const TEST_TIMEOUT_MS = 150_000;

/**
 * Registers the conformance catalogue as tests in the caller's suite: a `describe` per
 * area and a `test` per check, named `<id>: <requirement>`. Checks run in catalogue
 * order (run the file's tests sequentially, which vitest does within a file); all
 * temporary files are removed in `afterAll`.
 */
export function conformanceTests(options: ConformanceTestOptions): void {
  const settings = resolveSettings(options);
  const checks = selectChecks(CATALOGUE, options.only, options.skip);
  const session = new ConformanceSession(options.plugin, settings, options.volumesDir);
  options.describe(`dhv conformance: ${options.plugin}`, () => {
    for (const area of AREAS) {
      const inArea = checks.filter((c) => c.area === area);
      if (inArea.length === 0) continue;
      options.describe(area, () => {
        for (const check of inArea) {
          options.test(
            `${check.id}: ${check.title}`,
            async (context) => {
              const result = await session.runCheck(check);
              options.onResult?.(result);
              const strictFail = result.status === 'fail' && (check.severity === 'required' || options.strict);
              if (strictFail) throw new Error(`${check.id} failed: ${result.reason ?? ''} (${check.protocolRef})`);
              if (result.status === 'skip') context.skip(result.reason);
              if (result.status === 'warn' || result.status === 'fail') console.warn(`${check.id}: ${result.status}: ${result.reason ?? ''}`);
            },
            TEST_TIMEOUT_MS,
          );
        }
      });
    }
    options.afterAll(async () => {
      const problems = await session.close();
      if (problems.length > 0) throw new Error(`dhv conformance cleanup: ${problems.join('; ')}`);
    }, TEST_TIMEOUT_MS);
  });
}
