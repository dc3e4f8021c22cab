import { CATALOGUE } from './catalogue/index.js';
import { selectChecks } from './select.js';
import { ConformanceSession } from './session.js';
import { resolveSettings, type SettingsInput } from './settings.js';
import type { Check, CheckResult, ConformanceReport, Status } from './types.js';

export interface RunOptions extends SettingsInput {
  /** Check IDs or areas to run; all when empty. */
  only?: readonly string[];
  /** Check IDs or areas to leave out. */
  skip?: readonly string[];
  /** Where the run's temporary root is made (default: the OS temp dir); use it to test on a given filesystem. */
  volumesDir?: string;
  signal?: AbortSignal;
  /** Called before and after each check, for progress displays. */
  onProgress?: (event: ProgressEvent) => void;
  catalogue?: readonly Check[];
}

export type ProgressEvent =
  | { kind: 'start'; check: Check; index: number; total: number }
  | { kind: 'done'; result: CheckResult; index: number; total: number };

/** Runs the selected checks against a plugin executable and removes everything it made. */
export async function runConformance(plugin: string, options: RunOptions = {}): Promise<ConformanceReport> {
  const settings = resolveSettings(options);
  const checks = selectChecks(options.catalogue ?? CATALOGUE, options.only, options.skip);
  const session = new ConformanceSession(plugin, settings, options.volumesDir, options.signal);
  const startedAt = new Date();
  const started = performance.now();
  const results: CheckResult[] = [];
  try {
    for (const [index, check] of checks.entries()) {
      options.onProgress?.({ kind: 'start', check, index, total: checks.length });
      const result = await session.runCheck(check);
      results.push(result);
      options.onProgress?.({ kind: 'done', result, index, total: checks.length });
    }
  } finally {
    const problems = await session.close();
    if (problems.length > 0) {
      const last = results.at(-1);
      last?.notes.push(...problems.map((p) => `run cleanup: ${p}`));
    }
  }
  return buildReport(session.plugin, settings, startedAt, performance.now() - started, results);
}

function buildReport(
  plugin: string,
  settings: ReturnType<typeof resolveSettings>,
  startedAt: Date,
  durationMs: number,
  results: CheckResult[],
): ConformanceReport {
  const summary = { pass: 0, fail: 0, warn: 0, skip: 0, requiredFailed: 0 } satisfies Record<Status, number> & { requiredFailed: number };
  for (const r of results) {
    summary[r.status]++;
    if (r.status === 'fail' && r.severity === 'required') summary.requiredFailed++;
  }
  return {
    plugin,
    startedAt: startedAt.toISOString(),
    durationMs,
    settings: {
      repeat: settings.repeat,
      parameters: settings.parameters,
      capacityMin: settings.capacityMin.toString(),
      capacityMax: settings.capacityMax.toString(),
    },
    results,
    summary,
    ok: summary.requiredFailed === 0,
  };
}
