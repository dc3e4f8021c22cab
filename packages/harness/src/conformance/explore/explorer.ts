import { setMaxListeners } from 'node:events';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import type { CheckContext, ExploreSettings } from '../types.js';
import { sequences } from './generate.js';
import { VolumeLab, type Ending } from './lab.js';
import { Violation } from './violation.js';
import type { Step } from './recipe.js';
import type { CreateTime } from './create-speed.js';
import type { DefectClass } from './defect-classes.js';
import { systematicPhase, type SystematicOutcome } from './systematic.js';
import { settle, verdictOf, type Verdict } from './verdict-detail.js';
import { RECOMMENDED_EXPLORE_CHECK, type ExploreCheckId } from './verdicts.js';

export interface Finding {
  checkId: ExploreCheckId;
  message: string;
  /** The smallest sequence found that breaks the model, as run. */
  steps: Step[];
  /** How many steps the first failing sequence had, before shrinking. */
  shrunkFrom: number;
  verdict: Verdict;
  /** The classes of the systematic scenario that found it ([] for the measurement of the plugin's pace); undefined when a random sequence did. */
  scenario?: DefectClass[];
}

export interface ExploreOutcome {
  seed: number;
  /** Sequences run until a failure was found (or all of them), not counting shrinking. */
  runs: number;
  /** Agent calls made in all, shrinking included. */
  calls: number;
  durationMs: number;
  replayed: boolean;
  /** Each distinct break found: the systematic phase's (one per check and class), else the random search's one. */
  findings: Finding[];
  /** The systematic phase, run before the random sequences (not on a replay). */
  systematic?: Omit<SystematicOutcome, 'findings'>;
}

type RunFinding = { violation: Violation; steps: Step[] };

/**
 * Shrinking is bounded by work, not time, so that a busy machine shrinks as far as an idle
 * one: this many of fast-check's tries (each a whole run, and a try that drops a step moves
 * the picks after it), then the tightening of the recipe as run, at most TIGHTEN_REPLAYS
 * replays, and the replays that count how often the shrunk recipe breaks (verdict-detail.ts).
 */
const FAST_CHECK_SHRINK_TRIES = 6;
const TIGHTEN_REPLAYS = 40;

/** Runs recipes in fresh labs, one volumes dir each, and counts what they cost. */
class Labs {
  private made = 0;
  calls = 0;
  readonly createTimes: CreateTime[] = [];
  constructor(private readonly ctx: CheckContext) {}

  readonly run = async (
    steps: (lab: VolumeLab) => Promise<unknown>,
    stopAtCosmetic: boolean,
    ending: Ending = 'full',
  ): Promise<RunFinding | undefined> => {
    // Taken before any wait: runs made at once (the systematic phase's) each have their own number and volume IDs.
    const number = ++this.made;
    const dir = join(this.ctx.sandbox, `run-${number}`, 'volumes');
    await mkdir(dir, { recursive: true });
    const lab = new VolumeLab(this.ctx, dir, number, stopAtCosmetic, ending);
    try {
      await steps(lab);
      await lab.finish();
      return lab.cosmetic;
    } catch (err) {
      if (err instanceof Violation) return { violation: err, steps: [...lab.history] };
      throw err;
    } finally {
      this.calls += lab.calls;
      this.createTimes.push(...lab.createTimes);
      for (const problem of await lab.discard()) this.ctx.note(`cleanup: ${problem}`);
    }
  };

  /** A recipe, run step by step; `wherePossible`: a step at a volume whose create was dropped is dropped too. */
  replay(recipe: readonly Step[], stopAtCosmetic: boolean, wherePossible = false): Promise<RunFinding | undefined> {
    return this.run(async (lab) => {
      for (const step of recipe) await (wherePossible ? lab.runWherePossible(step) : lab.run(step));
    }, stopAtCosmetic);
  }
}

/**
 * The systematic phase first (a scenario per defect class), then `settings.runs` random
 * sequences of the agent's calls against the plugin, or fewer when one breaks the model;
 * the failure is shrunk to the smallest sequence that breaks the same check and settled
 * (counted, tightened, its verdict). A `--replay` runs its one recipe alone.
 */
export async function explore(ctx: CheckContext, settings: ExploreSettings): Promise<ExploreOutcome> {
  const started = performance.now();
  // A restart of many volumes has a plugin call, each listening for the run's interruption, per volume.
  setMaxListeners(64, ctx.signal);
  const labs = new Labs(ctx);
  const before: Pick<ExploreOutcome, 'systematic'> = {};
  const outcome = (runs: number, findings: Finding[]): ExploreOutcome => ({
    seed: settings.seed,
    runs,
    calls: labs.calls,
    durationMs: performance.now() - started,
    replayed: settings.replay !== undefined,
    findings,
    ...(before.systematic === undefined ? {} : { systematic: before.systematic }),
  });

  if (settings.replay !== undefined) {
    // A cosmetic break does not end a replay: the recipe may lead on to a worse one.
    const found = await labs.replay(settings.replay, false);
    return outcome(
      1,
      found ? [toFinding(found, found.steps.length, verdictOf(found, undefined, labs.createTimes))] : [],
    );
  }

  if (settings.systematic) {
    const found = await runSystematicPhase(ctx, labs, before);
    if (found.length > 0) return outcome(0, found);
  }
  const { runs, finding } = await randomSearch(ctx, settings, labs);
  return outcome(runs, finding === undefined ? [] : [finding]);
}

/** Every class of the README's list driven on purpose first; a break there ends the search. */
async function runSystematicPhase(
  ctx: CheckContext,
  labs: Labs,
  before: Pick<ExploreOutcome, 'systematic'>,
): Promise<Finding[]> {
  const { findings, ...phase } = await systematicPhase(ctx, labs.run, {
    replays: TIGHTEN_REPLAYS,
    createTimes: labs.createTimes,
  });
  before.systematic = phase;
  return findings.map((f) => ({ ...toFinding(f.found, f.shrunkFrom, f.verdict), scenario: f.classes }));
}

/**
 * fast-check's search: sequences until one breaks the model (a cosmetic break does not stop
 * the search for one that loses data; it is shrunk only when nothing worse was found), then
 * its shrinking of that failure, then the settling of the recipe as run.
 */
async function randomSearch(
  ctx: CheckContext,
  settings: ExploreSettings,
  labs: Labs,
): Promise<{ runs: number; finding: Finding | undefined }> {
  // fast-check runs the property; what it cannot carry (our own errors, an interruption) waits here.
  let stop: { error: unknown } | undefined;
  const throwIfStopped = () => {
    if (stop !== undefined) throw stop.error;
  };
  /**
   * While shrinking: the check whose break is being shrunk (a break of another check is not
   * this failure), and how many of fast-check's tries are left to run.
   */
  const shrinking: { target?: ExploreCheckId; triesLeft: number } = { triesLeft: FAST_CHECK_SHRINK_TRIES };
  let last: RunFinding | undefined;
  let cosmetic: { found: RunFinding; path: string } | undefined;
  let generated = 0;
  // Once stopped, the search ends at the next run: a "failure" ends it (endOnFailure), where a
  // pass would have fast-check generate every sequence left. Shrinking has no such end; its
  // shrinks pass untried.
  const verdictOnceStopped = () => shrinking.target !== undefined;
  const property = fc.asyncProperty(sequences, async (commands) => {
    if (stop !== undefined) return verdictOnceStopped();
    // Past its tries, fast-check runs through the shrinks it has left; they pass untried.
    if (shrinking.target !== undefined && shrinking.triesLeft-- <= 0) return true;
    if (ctx.signal.aborted) {
      stop = { error: ctx.signal.reason };
      return verdictOnceStopped();
    }
    const index = generated++;
    try {
      const found = await labs.run(
        (lab) => fc.asyncModelRun(() => ({ model: lab, real: lab }), commands),
        shrinking.target === RECOMMENDED_EXPLORE_CHECK,
      );
      if (found === undefined) return true;
      const id = found.violation.checkId;
      if (shrinking.target === undefined && id === RECOMMENDED_EXPLORE_CHECK) {
        cosmetic ??= { found, path: String(index) };
        return true;
      }
      if (shrinking.target !== undefined && id !== shrinking.target) return true;
      last = found;
      return false;
    } catch (err) {
      stop = { error: err };
      return true;
    }
  });

  const search = await fc.check(property, { seed: settings.seed, numRuns: settings.runs, endOnFailure: true });
  const runs = generated;
  // A run cut short by the interruption is no failure to shrink.
  ctx.signal.throwIfAborted();
  throwIfStopped();
  let path: string | undefined;
  if (search.failed && last !== undefined) path = search.counterexamplePath ?? undefined;
  else if (cosmetic !== undefined) {
    last = cosmetic.found;
    path = cosmetic.path;
  }
  if (last === undefined || path === undefined) return { runs, finding: undefined };

  const first = last;
  shrinking.target = first.violation.checkId;
  await fc.check(property, { seed: settings.seed, numRuns: settings.runs, path });
  throwIfStopped();
  const settled = await settle(
    last,
    (recipe) => labs.replay(recipe, shrinking.target === RECOMMENDED_EXPLORE_CHECK, true),
    { replays: TIGHTEN_REPLAYS, createTimes: labs.createTimes },
  );
  return { runs, finding: toFinding(settled.found, first.steps.length, settled.verdict) };
}

function toFinding(found: RunFinding, shrunkFrom: number, verdict: Verdict): Finding {
  const { checkId, message } = found.violation;
  return { checkId, message, steps: found.steps, shrunkFrom, verdict };
}
