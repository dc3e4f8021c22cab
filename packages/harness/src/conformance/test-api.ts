import { CATALOGUE } from './catalogue/index.js';
import { runCommands } from './config-file.js';
import { verdictOf } from './policy.js';
import { withExtraChecks, withoutDisabledExplore } from './runner.js';
import { selectChecks } from './select.js';
import { ConformanceSession } from './session.js';
import { resolveSettings, type SettingsInput } from './settings.js';
import { AREAS, type Check, type CheckResult } from './types.js';

/** The parts of vitest (or jest, or node:test's shape) the test API uses; passed in so the harness never loads a test runner itself. */
export interface TestFunctions {
  describe: (name: string, body: () => void) => void;
  test: (name: string, body: (context: { skip: (note?: string) => void }) => Promise<void>, timeoutMs?: number) => void;
  afterAll: (fn: () => Promise<void>, timeoutMs?: number) => void;
  /** Needed only with `setup`. */
  beforeAll?: (fn: () => Promise<void>, timeoutMs?: number) => void;
}

export interface ConformanceTestOptions extends SettingsInput, TestFunctions {
  /** The plugin executable to check. */
  plugin: string;
  only?: readonly string[];
  skip?: readonly string[];
  volumesDir?: string;
  /**
   * A skipped required check fails its test, as `dhv check --strict` fails the run
   * (default: it is skipped, saying it is required). Recommended failures only warn,
   * as everywhere.
   */
  strict?: boolean;
  /** Checks of your own, run after the catalogue with the same context (ctx.provision, ctx.cleanup, ...) and cleanup. */
  checks?: readonly Check[];
  /**
   * Why the suite cannot run here (for example "needs root"), when it cannot: then one
   * test says so instead of the checks, skipped, or failed under strict. Never a silent pass.
   */
  unavailable?: string;
  /** Shell commands run before the first check and after the last (as `dhv check --config` runs them). */
  setup?: readonly string[];
  teardown?: readonly string[];
  /** Where setup and teardown run (default: the working directory). */
  commandsCwd?: string;
  /** Called with each result, e.g. to print warnings. */
  onResult?: (result: CheckResult) => void;
}

/** Time allowed per test: two create/delete budgets cover the slowest check. */
const TEST_TIMEOUT_MS = 150_000;

/**
 * The explore area's first check runs every sequence (its budget is a number of them, not a
 * time): a test timeout meant to catch a hang, not to cut the work short on a loaded machine,
 * so one such allowance per sequence.
 */
function timeoutOf(check: Check, settings: { explore: { runs: number } }): number {
  return check.area === 'explore' ? TEST_TIMEOUT_MS * Math.max(1, settings.explore.runs) : TEST_TIMEOUT_MS;
}

/**
 * Registers the conformance catalogue as tests in the caller's suite: a `describe` per
 * area and a `test` per check, named `<id>: <requirement>`. Checks run in catalogue
 * order (run the file's tests sequentially, which vitest does within a file); all
 * temporary files are removed in `afterAll`.
 */
export function conformanceTests(options: ConformanceTestOptions): void {
  const settings = resolveSettings(options);
  const checks = withoutDisabledExplore(
    selectChecks(withExtraChecks(CATALOGUE, options.checks), options.only, options.skip),
    settings,
  );
  const session = new ConformanceSession(options.plugin, settings, options.volumesDir);
  const strict = options.strict ?? false;
  if (options.unavailable !== undefined) {
    const why = options.unavailable;
    options.describe(`dhv conformance: ${options.plugin}`, () => {
      options.test(
        `NOT RUN: ${checks.length} checks, ${checks.filter((c) => c.severity === 'required').length} of them required: ${why}`,
        async (context) => {
          console.warn(`dhv conformance did NOT run against ${options.plugin}: ${why}`);
          if (strict)
            throw new Error(`dhv conformance could not run (${why}), and strict mode fails a run that judged nothing`);
          context.skip(why);
        },
      );
    });
    return;
  }
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
              const verdict = verdictOf(result, strict);
              if (verdict === 'fail' && result.status === 'fail')
                throw new Error(`${check.id} failed: ${result.reason ?? ''} (${check.protocolRef})`);
              if (verdict === 'fail')
                throw new Error(
                  `${check.id} is required and was skipped (strict mode fails that): ${result.reason ?? ''}`,
                );
              if (verdict === 'skip')
                context.skip(
                  `${check.severity === 'required' ? 'required check not judged: ' : ''}${result.reason ?? ''}`,
                );
              if (result.status === 'fail')
                console.warn(`${check.id}: recommended check failed (a warning): ${result.reason ?? ''}`);
              if (result.status === 'warn') console.warn(`${check.id}: warning: ${result.reason ?? ''}`);
            },
            timeoutOf(check, settings),
          );
        }
      });
    }
    const commandsCwd = options.commandsCwd ?? process.cwd();
    if (options.setup && options.setup.length > 0) {
      if (!options.beforeAll) throw new Error("conformanceTests: setup needs beforeAll (pass vitest's beforeAll)");
      options.beforeAll(() => runCommands('setup', options.setup ?? [], commandsCwd), TEST_TIMEOUT_MS);
    }
    options.afterAll(async () => {
      const problems = await session.close();
      await runCommands('teardown', options.teardown ?? [], commandsCwd).catch((err: Error) =>
        problems.push(err.message),
      );
      if (problems.length > 0) throw new Error(`dhv conformance cleanup: ${problems.join('; ')}`);
    }, TEST_TIMEOUT_MS);
  });
}
