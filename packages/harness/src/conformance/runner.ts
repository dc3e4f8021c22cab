import { CATALOGUE } from './catalogue/index.js';
import { runCommands } from './config-file.js';
import { STDIO_RELEASED, heldOutputFailure, heldOutputStop } from './held-output.js';
import { assertPluginRunnable } from './missing-plugin.js';
import { selectChecks } from './select.js';
import { SPACE_WITHIN_BOUND, describeSpaceFault, type SpaceFault } from './space-budget.js';
import { ConformanceSession } from './session.js';
import { InvalidSettingsError, resolveSettings, type SettingsInput } from './settings.js';

/** Checks are independent (each has its own sandbox), and most of their time is spent waiting for plugin processes. */
export const DEFAULT_JOBS = 4;
import type { Check, CheckResult, ConformanceReport, SuiteSettings } from './types.js';

export interface RunOptions extends SettingsInput {
  /** Check IDs or areas to run; all when empty. */
  only?: readonly string[];
  /** Check IDs or areas to leave out. */
  skip?: readonly string[];
  /** Where the run's temporary root is made (default: the OS temp dir); use it to test on a given filesystem. */
  volumesDir?: string;
  /** How many checks run at once (default 4); 1 runs them strictly one after another. */
  jobs?: number;
  signal?: AbortSignal;
  /** Once aborted (a second Ctrl-C), cleanup no longer waits for the plugin's deletes: it kills them and releases by force. */
  hurry?: AbortSignal;
  /** Called once the run starts (after setup, the plugin found), with the plugin's absolute path. */
  onStart?: (plugin: string) => void;
  /** Called before and after each check, for progress displays. */
  onProgress?: (event: ProgressEvent) => void;
  catalogue?: readonly Check[];
  /** Checks of the caller's own, run after the catalogue with the same context and cleanup. */
  extraChecks?: readonly Check[];
  /** A skipped required check fails the run too (what a plugin author's CI should use). */
  strict?: boolean;
  /** Shell commands run before the first check (a zpool, a volume group); a failure stops the run after teardown. */
  setup?: readonly string[];
  /** Shell commands run after the last check and its cleanup, whatever happened. */
  teardown?: readonly string[];
  /** Where setup and teardown run (default: the working directory). */
  commandsCwd?: string;
}

/** Why a check after a held output was not started. */
const NOT_RUN = `not run: the run stopped (see ${STDIO_RELEASED})`;
const NOT_RUN_SPACE = `not run: the run stopped (see ${SPACE_WITHIN_BOUND})`;

/** `index` counts the checks finished before this event, so a display can show `[index + 1/total]`. */
export type ProgressEvent =
  | { kind: 'start'; check: Check; index: number; total: number }
  | { kind: 'done'; result: CheckResult; index: number; total: number };

/** Runs the selected checks against a plugin executable and removes everything it made. */
export async function runConformance(plugin: string, options: RunOptions = {}): Promise<ConformanceReport> {
  const settings = resolveSettings(options);
  const checks = withoutDisabledExplore(
    selectChecks(withExtraChecks(options.catalogue ?? CATALOGUE, options.extraChecks), options.only, options.skip),
    settings,
  );
  let faultShown = false;
  const session = new ConformanceSession(
    plugin,
    settings,
    options.volumesDir,
    options.signal,
    (fault) => {
      // Shown the moment it is found; the check judging it says it itself.
      if (fault.checkId === STDIO_RELEASED) return;
      faultShown = true;
      options.onProgress?.({ kind: 'done', result: heldOutputFailure(fault), index: finished, total: checks.length });
    },
    (fault) => {
      if (fault.checkId === SPACE_WITHIN_BOUND) return;
      spaceShown = true;
      options.onProgress?.({ kind: 'done', result: spaceFailure(fault), index: finished, total: checks.length });
    },
    options.hurry,
  );
  let spaceShown = false;
  const startedAt = new Date();
  const started = performance.now();
  const jobs = options.jobs ?? DEFAULT_JOBS;
  if (!Number.isInteger(jobs) || jobs < 1)
    throw new InvalidSettingsError(`jobs must be a whole number of at least 1, got ${jobs}`, 'jobs');
  const results: CheckResult[] = new Array(checks.length);
  let finished = 0;
  const commandsCwd = options.commandsCwd ?? process.cwd();
  try {
    await runCommands('setup', options.setup ?? [], commandsCwd);
    // Setup may be what makes the plugin: only after it can a missing plugin be told apart.
    await assertPluginRunnable(session.plugin);
  } catch (err) {
    await runCommands('teardown', options.teardown ?? [], commandsCwd).catch(() => {});
    throw err;
  }
  options.onStart?.(session.plugin);
  try {
    await schedule(checks, jobs, async (check, index) => {
      if (options.signal?.aborted || session.fault || session.spaceFault) {
        results[index] = {
          ...describeCheck(check),
          status: 'skip',
          reason: options.signal?.aborted ? 'the run was interrupted' : session.fault ? NOT_RUN : NOT_RUN_SPACE,
          notes: [],
          durationMs: 0,
        };
        return;
      }
      options.onProgress?.({ kind: 'start', check, index: finished, total: checks.length });
      const result = await session.runCheck(check);
      results[index] = result;
      options.onProgress?.({ kind: 'done', result, index: finished++, total: checks.length });
    });
  } finally {
    const problems = await session.close();
    await runCommands('teardown', options.teardown ?? [], commandsCwd).catch((err: Error) =>
      problems.push(err.message),
    );
    if (problems.length > 0) {
      const last = results.at(-1);
      last?.notes.push(...problems.map((p) => `run cleanup: ${p}`));
    }
  }
  const fault = session.fault;
  if (fault) {
    // One required failure says it, whichever check ran into it first, unless that check was the one judging it.
    const failure = heldOutputFailure(fault);
    const at = results.findIndex((r) => r.id === failure.id);
    if (at === -1) results.push(failure);
    else if (results[at]!.status !== 'fail') results[at] = failure;
    if (!faultShown && (at === -1 || results[at] === failure))
      options.onProgress?.({ kind: 'done', result: failure, index: finished++, total: checks.length });
  }
  const spaceFault = session.spaceFault;
  if (spaceFault) {
    const failure = spaceFailure(spaceFault);
    const at = results.findIndex((r) => r.id === failure.id);
    if (at === -1) results.push(failure);
    else if (results[at]!.status !== 'fail') results[at] = failure;
    if (!spaceShown && (at === -1 || results[at] === failure))
      options.onProgress?.({ kind: 'done', result: failure, index: finished++, total: checks.length });
  }
  const report = buildReport(
    session.plugin,
    settings,
    startedAt,
    performance.now() - started,
    results,
    options.strict ?? false,
  );
  const notRun = results.filter((r) => r.reason === NOT_RUN || r.reason === NOT_RUN_SPACE).length;
  if (fault && notRun > 0 && !options.signal?.aborted) report.stopped = heldOutputStop(fault, notRun);
  else if (spaceFault && notRun > 0 && !options.signal?.aborted)
    report.stopped = `${describeSpaceFault(spaceFault)} (${SPACE_WITHIN_BOUND}): every further call could do the same, so ${notRun} ${notRun === 1 ? 'check was' : 'checks were'} not run`;
  // An interrupted run proves nothing either way.
  return options.signal?.aborted ? { ...report, ok: false, interrupted: true } : report;
}

/**
 * Starts checks in catalogue order, up to `jobs` at once. A check starts only after
 * the checks it needs have finished, and a check marked `alone` (it measures time)
 * runs with nothing else running. Needs always point backwards, so this cannot deadlock.
 */
async function schedule(
  checks: readonly Check[],
  jobs: number,
  run: (check: Check, index: number) => Promise<void>,
): Promise<void> {
  const done = new Map<string, Promise<void>>();
  const running = new Set<Promise<void>>();
  const ids = new Set(checks.map((c) => c.id));
  for (const [index, check] of checks.entries()) {
    await Promise.all((check.needs ?? []).filter((id) => ids.has(id)).map((id) => done.get(id)));
    if (check.alone) await Promise.all(running);
    while (running.size >= jobs) await Promise.race(running);
    const task = run(check, index).finally(() => running.delete(task));
    running.add(task);
    done.set(check.id, task);
    if (check.alone) await task;
  }
  await Promise.all(running);
}

export function buildReport(
  plugin: string,
  settings: ReturnType<typeof resolveSettings>,
  startedAt: Date,
  durationMs: number,
  results: CheckResult[],
  strict = false,
): ConformanceReport {
  const summary: ConformanceReport['summary'] = {
    pass: 0,
    fail: 0,
    warn: 0,
    skip: 0,
    requiredFailed: 0,
    requiredSkipped: 0,
    recommendedFailed: 0,
  };
  for (const r of results) {
    summary[r.status]++;
    if (r.status === 'fail' && r.severity === 'required') summary.requiredFailed++;
    if (r.status === 'skip' && r.severity === 'required') summary.requiredSkipped++;
    if (r.status === 'fail' && r.severity === 'recommended') summary.recommendedFailed++;
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
      expansionSize: settings.expansionSize.toString(),
      supports: settings.supports,
    },
    results,
    summary,
    strict,
    ok: summary.requiredFailed === 0 && (!strict || summary.requiredSkipped === 0),
    interrupted: false,
  };
}

/** The checks minus the explore area when exploring is turned off (`--no-explore`). */
export function withoutDisabledExplore(checks: Check[], settings: SuiteSettings): Check[] {
  return settings.explore.enabled ? checks : checks.filter((c) => c.area !== 'explore');
}

/** The catalogue followed by the caller's own checks, whose IDs must be new. */
export function withExtraChecks(catalogue: readonly Check[], extra: readonly Check[] = []): Check[] {
  const taken = new Set(catalogue.map((c) => c.id));
  for (const check of extra) {
    if (taken.has(check.id))
      throw new InvalidSettingsError(`a custom check cannot reuse the ID ${JSON.stringify(check.id)}`, 'checks');
    taken.add(check.id);
  }
  return [...catalogue, ...extra];
}

/** The required failure a space fault is: safety.space-within-bound, whichever check ran into it. */
function spaceFailure(fault: SpaceFault): CheckResult {
  const check = CATALOGUE.find((c) => c.id === SPACE_WITHIN_BOUND)!;
  return { ...describeCheck(check), status: 'fail', reason: describeSpaceFault(fault), notes: [], durationMs: 0 };
}

function describeCheck({ id, area, title, protocolRef, severity, gradeReason }: Check) {
  return { id, area, title, protocolRef, severity, gradeReason };
}
