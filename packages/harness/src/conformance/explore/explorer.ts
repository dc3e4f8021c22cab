import { setMaxListeners } from 'node:events';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import type { CheckContext, ExploreSettings } from '../types.js';
import { sequences } from './generate.js';
import { StepNotPossible, VolumeLab, Violation } from './lab.js';
import type { Step } from './recipe.js';
import { RECOMMENDED_EXPLORE_CHECK, type ExploreCheckId } from './verdicts.js';

export interface Finding {
  checkId: ExploreCheckId;
  message: string;
  /** The smallest sequence found that breaks the model, as run. */
  steps: Step[];
  /** How many steps the first failing sequence had, before shrinking. */
  shrunkFrom: number;
}

export interface ExploreOutcome {
  seed: number;
  /** Sequences run before a failure was found (or the budget ran out), not counting shrinking. */
  runs: number;
  /** Agent calls made in all, shrinking included. */
  calls: number;
  durationMs: number;
  replayed: boolean;
  finding: Finding | undefined;
}

type RunFinding = { violation: Violation; steps: Step[] };

/** Upper bound on the generated runs when only the time budget limits them. */
const UNLIMITED_RUNS = 1_000_000;
/** Shrinking gets as long as the search, and at least this long; dropping needless steps after it half as long again. */
const MIN_SHRINK_MS = 10_000;

/**
 * Runs random sequences of the agent's calls against the plugin until one breaks the
 * model or the budget is spent, then shrinks the failure with fast-check to the smallest
 * sequence that breaks the same check. A cosmetic break does not stop the search for one
 * that loses data; it is shrunk only when nothing worse was found.
 */
export async function explore(ctx: CheckContext, settings: ExploreSettings): Promise<ExploreOutcome> {
  const started = performance.now();
  // A restart of many volumes has a plugin call, each listening for the run's interruption, per volume.
  setMaxListeners(64, ctx.signal);
  let labs = 0;
  let calls = 0;
  const runLab = async (
    steps: (lab: VolumeLab) => Promise<unknown>,
    stopAtCosmetic: boolean,
  ): Promise<RunFinding | undefined> => {
    const dir = join(ctx.sandbox, `run-${++labs}`, 'volumes');
    await mkdir(dir, { recursive: true });
    const lab = new VolumeLab(ctx, dir, labs, stopAtCosmetic);
    try {
      await steps(lab);
      await lab.finish();
      return lab.cosmetic;
    } catch (err) {
      if (err instanceof Violation) return { violation: err, steps: [...lab.history] };
      throw err;
    } finally {
      calls += lab.calls;
      for (const problem of await lab.discard()) ctx.note(`cleanup: ${problem}`);
    }
  };
  const outcome = (runs: number, finding: Finding | undefined): ExploreOutcome => ({
    seed: settings.seed,
    runs,
    calls,
    durationMs: performance.now() - started,
    replayed: settings.replay !== undefined,
    finding,
  });

  const replay = (recipe: readonly Step[], stopAtCosmetic: boolean) =>
    runLab(async (lab) => {
      for (const step of recipe) await lab.run(step);
    }, stopAtCosmetic);

  if (settings.replay !== undefined) {
    // A cosmetic break does not end a replay: the recipe may lead on to a worse one.
    const found = await replay(settings.replay, false);
    return outcome(1, found && toFinding(found, found.steps.length));
  }

  // fast-check runs the property; what it cannot carry (our own errors, an interruption) waits here.
  let stop: { error: unknown } | undefined;
  const throwIfStopped = () => {
    if (stop !== undefined) throw stop.error;
  };
  /** While shrinking: the check whose break is being shrunk; a break of another check is not this failure. */
  const shrinking: { target?: ExploreCheckId } = {};
  let last: RunFinding | undefined;
  let cosmetic: { found: RunFinding; path: string } | undefined;
  let generated = 0;
  // At its time limit fast-check stops waiting for the run in flight (interruptAfterTimeLimit
  // races it) but the run goes on: it is awaited before the explorer returns, so no plugin
  // call outlives the check, and what it finds then counts for nothing.
  let inFlight: Promise<unknown> = Promise.resolve();
  let abandoned = false;
  const settle = async () => {
    abandoned = true;
    await inFlight;
    abandoned = false;
  };
  const property = fc.asyncProperty(sequences, async (commands) => {
    if (stop !== undefined) return true;
    if (ctx.signal.aborted) {
      stop = { error: ctx.signal.reason };
      return true;
    }
    const index = generated++;
    try {
      const run = runLab(
        (lab) => fc.asyncModelRun(() => ({ model: lab, real: lab }), commands),
        shrinking.target === RECOMMENDED_EXPLORE_CHECK,
      );
      inFlight = run.catch(() => undefined);
      const found = await run;
      if (abandoned || found === undefined) return true;
      const id = found.violation.checkId;
      if (shrinking.target === undefined && id === RECOMMENDED_EXPLORE_CHECK) {
        cosmetic ??= { found, path: String(index) };
        return true;
      }
      if (shrinking.target !== undefined && id !== shrinking.target) return true;
      last = found;
      return false;
    } catch (err) {
      if (!abandoned) stop = { error: err };
      return true;
    }
  });

  const search = await fc.check(property, {
    seed: settings.seed,
    numRuns: settings.runs ?? UNLIMITED_RUNS,
    endOnFailure: true,
    plugins: [fc.interruptAfterTimeLimit(settings.budgetMs)],
  });
  await settle();
  const runs = generated;
  throwIfStopped();
  let path: string | undefined;
  if (search.failed && last !== undefined) path = search.counterexamplePath ?? undefined;
  else if (cosmetic !== undefined) {
    last = cosmetic.found;
    path = cosmetic.path;
  }
  if (last === undefined || path === undefined) return outcome(runs, undefined);

  const shrinkMs = Math.max(settings.budgetMs, MIN_SHRINK_MS);
  const first = last;
  shrinking.target = first.violation.checkId;
  await fc.check(property, {
    seed: settings.seed,
    numRuns: settings.runs ?? UNLIMITED_RUNS,
    path,
    plugins: [fc.interruptAfterTimeLimit(shrinkMs)],
  });
  await settle();
  throwIfStopped();
  const tightened = await tighten(last, (recipe) => replay(recipe, shrinking.target === RECOMMENDED_EXPLORE_CHECK), {
    until: performance.now() + shrinkMs / 2,
  });
  return outcome(runs, toFinding(tightened, first.steps.length));
}

/**
 * fast-check shrinks the generated sequence; a step it keeps can still be needless once
 * its picks are names. This tries each step alone, then drops one step at a time from the
 * recipe as run, keeping each drop after which a replay still breaks the same check,
 * while time allows.
 */
async function tighten(
  found: RunFinding,
  replay: (recipe: readonly Step[]) => Promise<RunFinding | undefined>,
  { until }: { until: number },
): Promise<RunFinding> {
  const breaksTheSame = async (recipe: readonly Step[]) => {
    const again = await replay(recipe).catch((err: unknown) => {
      if (err instanceof StepNotPossible) return undefined;
      throw err;
    });
    return again?.violation.checkId === found.violation.checkId ? again : undefined;
  };
  // One step alone is often enough (a fill before a slow fingerprint), and cheap to try.
  for (const step of [...found.steps].reverse()) {
    if (found.steps.length === 1 || performance.now() >= until) break;
    const alone = await breaksTheSame([step]);
    if (alone) return alone;
  }
  let best = found;
  // Fills make every replay slow: try without any of them first.
  const withoutFills = best.steps.filter((step) => step.kind !== 'fill');
  if (withoutFills.length > 0 && withoutFills.length < best.steps.length && performance.now() < until)
    best = (await breaksTheSame(withoutFills)) ?? best;
  for (let i = best.steps.length - 1; i >= 0 && best.steps.length > 1 && performance.now() < until; i--) {
    const again = await breaksTheSame(best.steps.filter((_, j) => j !== i));
    if (again) best = again;
  }
  return best;
}

function toFinding(found: RunFinding, shrunkFrom: number): Finding {
  return { checkId: found.violation.checkId, message: found.violation.message, steps: found.steps, shrunkFrom };
}
