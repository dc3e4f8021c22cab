import { resolve } from 'node:path';
import { CATALOGUE } from './catalogue/index.js';
import {
  defaultCapacityProbe,
  noCapacityGiven,
  withFallbackCapacity,
  withoutNeedOfDefault,
} from './catalogue/default-capacity.js';
import { runCommands } from './config-file.js';
import { STDIO_RELEASED, heldOutputFailure, heldOutputStop } from './held-output.js';
import { assertPluginRunnable } from './missing-plugin.js';
import { selectChecks } from './select.js';
import { SPACE_WITHIN_BOUND, describeSpaceFault, type SpaceFault } from './space-budget.js';
import { ConformanceSession } from './session.js';
import { RunProgress, type ProgressEvent } from './run-progress.js';
import { InvalidSettingsError, resolveSettings, type SettingsInput } from './settings.js';

import {
  describeCheck,
  type Check,
  type CheckResult,
  type ConformanceReport,
  type FallbackCapacity,
  type SuiteSettings,
} from './types.js';

export type { ProgressEvent } from './run-progress.js';

/** Checks are independent (each has its own sandbox), and most of their time is spent waiting for plugin processes. */
export const DEFAULT_JOBS = 4;

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

/** Runs the selected checks against a plugin executable and removes everything it made. */
export async function runConformance(plugin: string, options: RunOptions = {}): Promise<ConformanceReport> {
  const given = resolveSettings(options);
  const selected = withoutDisabledExplore(
    selectChecks(withExtraChecks(options.catalogue ?? CATALOGUE, options.extraChecks), options.only, options.skip),
    given,
  );
  const jobs = options.jobs ?? DEFAULT_JOBS;
  if (!Number.isInteger(jobs) || jobs < 1)
    throw new InvalidSettingsError(`jobs must be a whole number of at least 1, got ${jobs}`, 'jobs');
  const startedAt = new Date();
  const started = performance.now();
  await setUp(resolve(plugin), options);
  const settings = withFallbackCapacity(given, await probeDefaultCapacity(plugin, given, selected, options));
  const checks = settings.fallbackCapacity === undefined ? selected : withoutNeedOfDefault(selected);
  const progress = new RunProgress(checks.length, options.onProgress);
  const session = new ConformanceSession(
    plugin,
    settings,
    options.volumesDir,
    options.signal,
    (fault) => progress.faultFound(heldOutputFailure(fault), fault.checkId),
    (fault) => progress.faultFound(spaceFailure(fault), fault.checkId),
    options.hurry,
  );
  options.onStart?.(session.plugin);
  try {
    await schedule(checks, jobs, (check, index) => runOne(session, check, index, progress, options.signal));
  } finally {
    await tearDown(session, options, progress.results);
  }
  if (session.fault) progress.recordFault(heldOutputFailure(session.fault));
  if (session.spaceFault) progress.recordFault(spaceFailure(session.spaceFault));
  const report = buildReport(
    session.plugin,
    settings,
    startedAt,
    performance.now() - started,
    progress.results,
    options.strict ?? false,
  );
  // An interrupted run proves nothing either way.
  if (options.signal?.aborted) return { ...report, ok: false, interrupted: true };
  const stopped = stoppedBy(session, progress.results);
  return stopped === undefined ? report : { ...report, stopped };
}

/** Runs setup, then finds the plugin: setup may be what makes it, so only after it can a missing plugin be told apart. */
async function setUp(plugin: string, options: RunOptions): Promise<void> {
  try {
    await runCommands('setup', options.setup ?? [], options.commandsCwd ?? process.cwd());
    await assertPluginRunnable(plugin);
  } catch (err) {
    await runCommands('teardown', options.teardown ?? [], options.commandsCwd ?? process.cwd()).catch(() => {});
    throw err;
  }
}

/**
 * When no capacity was given and some check asks for a volume: one create without a
 * capacity, in a session of its own, and the fallback capacity when the plugin refused it
 * (catalogue/default-capacity.ts). Whatever went wrong here, the checks find again.
 */
async function probeDefaultCapacity(
  plugin: string,
  settings: SuiteSettings,
  checks: readonly Check[],
  options: RunOptions,
): Promise<FallbackCapacity | undefined> {
  if (!noCapacityGiven(settings) || !checks.some((c) => c.asks !== undefined) || options.signal?.aborted)
    return undefined;
  const session = new ConformanceSession(
    plugin,
    settings,
    options.volumesDir,
    options.signal,
    undefined,
    undefined,
    options.hurry,
  );
  let found: FallbackCapacity | undefined;
  try {
    await session.runCheck(defaultCapacityProbe((capacity) => (found = capacity)));
  } catch {
    return undefined;
  } finally {
    await session.close().catch(() => []);
  }
  return found;
}

/** Removes what the checks left, then runs teardown; what went wrong is a note on the last result. */
async function tearDown(session: ConformanceSession, options: RunOptions, results: CheckResult[]): Promise<void> {
  const problems = await session.close();
  await runCommands('teardown', options.teardown ?? [], options.commandsCwd ?? process.cwd()).catch((err: Error) =>
    problems.push(err.message),
  );
  if (problems.length > 0) results.at(-1)?.notes.push(...problems.map((p) => `run cleanup: ${p}`));
}

/** One check, or its skip once the run was interrupted or stopped by a fault. */
async function runOne(
  session: ConformanceSession,
  check: Check,
  index: number,
  progress: RunProgress,
  signal: AbortSignal | undefined,
): Promise<void> {
  if (signal?.aborted || session.fault || session.spaceFault) {
    const reason = signal?.aborted ? 'the run was interrupted' : session.fault ? NOT_RUN : NOT_RUN_SPACE;
    progress.notStarted(index, { ...describeCheck(check), status: 'skip', reason, notes: [], durationMs: 0 });
    return;
  }
  progress.started(check);
  progress.done(index, await session.runCheck(check));
}

/** Why the run stopped before some checks, when a fault stopped it. */
function stoppedBy(session: ConformanceSession, results: CheckResult[]): string | undefined {
  const notRun = results.filter((r) => r.reason === NOT_RUN || r.reason === NOT_RUN_SPACE).length;
  if (notRun === 0) return undefined;
  if (session.fault) return heldOutputStop(session.fault, notRun);
  if (session.spaceFault)
    return `${describeSpaceFault(session.spaceFault)} (${SPACE_WITHIN_BOUND}): every further call could do the same, so ${notRun} ${notRun === 1 ? 'check was' : 'checks were'} not run`;
  return undefined;
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
      ...(settings.fallbackCapacity === undefined
        ? {}
        : {
            capacityMin: '0',
            fallbackCapacity: {
              bytes: settings.fallbackCapacity.bytes.toString(),
              refused: settings.fallbackCapacity.refused,
            },
          }),
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
