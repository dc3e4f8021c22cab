import { deadlineWords, type CreateTime } from './create-speed.js';
import { classify, DEFECT_CLASSES, type DefectClass } from './defect-classes.js';
import type { Step } from './recipe.js';
import { tighten } from './tighten.js';
import type { Violation } from './violation.js';

/** How many times a shrunk recipe is replayed to tell a break that happens every time from one that happens some of the time. */
export const TIMES_REPLAYED = 5;
/** A tightening after a break that happens some of the time replays each shorter recipe up to this often before it keeps a step. */
const MOST_TRIES = 5;

/** A sequence that broke the model, as run. */
export interface Broken {
  violation: Violation;
  steps: Step[];
}

/** How often a recipe broke the same check when replayed. */
export interface Replays {
  broke: number;
  of: number;
}

/** What a finding says beside its message: its class, how often it breaks, when the agent meets it. */
export interface Verdict {
  defectClass: DefectClass;
  /** Undefined when the recipe was not replayed to count (a --replay). */
  replays: Replays | undefined;
  /** Lines after the replay command, each a sentence. */
  details: string[];
}

type Replay = (recipe: readonly Step[]) => Promise<Broken | undefined>;

/**
 * After shrinking: replays the recipe TIMES_REPLAYED times to see whether it breaks every
 * time; tightens it until every step is needed, trying each shorter recipe once when it did,
 * several times when it did not (a step kept because one replay happened to pass is not
 * needed); then counts again on the recipe it ends with. At most `replays` replays to
 * tighten, whatever they take.
 */
export async function settle(
  found: Broken,
  replay: Replay,
  {
    replays,
    createTimes,
    classes,
  }: {
    replays: number;
    createTimes: readonly CreateTime[];
    /** The classes of the systematic phase's scenario that found it: its class is one of them. */
    classes?: readonly DefectClass[];
  },
): Promise<{ found: Broken; verdict: Verdict }> {
  let left = replays;
  const before = await countBreaks(found, replay);
  const tries = triesFor(before);
  const persistent: Replay = async (recipe) => {
    for (let i = 0; i < tries && left > 0; i++) {
      left--;
      const again = await replay(recipe);
      if (again?.violation.checkId === found.violation.checkId) return again;
    }
    return undefined;
  };
  const best = await tightenFully(found, persistent, () => Math.floor(left / tries));
  const count = best === found ? before : await countBreaks(best, replay);
  return { found: best, verdict: verdictOf(best, count, createTimes, classes) };
}

/** How often to try a shorter recipe before keeping the step it drops: enough to miss a break that happens as often as counted one time in ten. */
function triesFor({ broke, of }: Replays): number {
  if (broke === of) return 1;
  const rate = Math.max(broke, 1) / of;
  return Math.min(MOST_TRIES, Math.ceil(Math.log(0.1) / Math.log(1 - rate)));
}

/**
 * The class, the plugin's stderr and when the agent meets it, for a break as run; `replays`
 * as counted. A scenario's classes, when given, are what its break may be.
 */
export function verdictOf(
  found: Broken,
  replays: Replays | undefined,
  createTimes: readonly CreateTime[],
  classes: readonly DefectClass[] = [],
): Verdict {
  const { violation, steps } = found;
  const shown = classify(violation.checkId, steps, violation);
  const defectClass = classes.length === 0 || classes.includes(shown) ? shown : classes[0]!;
  const details = [`defect class ${defectClass}: ${DEFECT_CLASSES[defectClass]}`];
  if (violation.stderr) details.push(`the plugin's stderr ended, in ${violation.stderr}`);
  if (defectClass === 'killed-create-lock' || defectClass === 'killed-create-part-way')
    details.push(deadlineWords(createTimes));
  return { defectClass, replays, details };
}

/** How the count reads in a verdict: '' when it broke every time. */
export function replaysWords(replays: Replays | undefined): string {
  if (replays === undefined || replays.broke === replays.of) return '';
  const how = replays.broke === 0 ? 'it broke in the search but in none of' : `it broke in ${replays.broke} of`;
  return ` (${how} ${replays.of} replays of this recipe: it fails some of the time, not every time)`;
}

/** Tightening again while it still drops a step and replays are left: a step may be needed only for one dropped since. */
async function tightenFully(found: Broken, replay: Replay, budget: () => number): Promise<Broken> {
  let best = found;
  while (budget() > 0) {
    const next = await tighten(best, replay, { replays: budget() });
    if (next.steps.length >= best.steps.length) return next;
    best = next;
  }
  return best;
}

async function countBreaks(found: Broken, replay: Replay): Promise<Replays> {
  let broke = 0;
  for (let i = 0; i < TIMES_REPLAYED; i++)
    if ((await replay(found.steps))?.violation.checkId === found.violation.checkId) broke++;
  return { broke, of: TIMES_REPLAYED };
}
