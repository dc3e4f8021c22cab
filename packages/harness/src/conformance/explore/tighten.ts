import type { Step, VolumeCall } from './recipe.js';

/** A sequence that broke the model, as run, and which check it broke. */
export interface Break {
  violation: { checkId: string };
  steps: Step[];
}

/**
 * fast-check shrinks the generated sequence; a step it keeps can still be needless once
 * its picks are names. This drops steps from the recipe as run, keeping each drop after
 * which a replay still breaks the same check: first every fill (they
 * make each replay slow), then all but a fill, then each fill down to one volume, then
 * plainer calls (a create not killed, not large), then each step in turn, then single
 * calls of the steps that run several at once. A replay runs what it can: a step
 * aimed at a volume whose create was dropped goes too. At most `replays` replays, whatever
 * they take: a busy machine tightens as far as an idle one.
 */
export async function tighten<F extends Break>(
  found: F,
  replay: (recipe: readonly Step[]) => Promise<F | undefined>,
  { replays }: { replays: number },
): Promise<F> {
  let left = replays;
  const replaysLeft = () => left > 0;
  let best = found;
  /** Whether `recipe` still breaks the check; if so it becomes the best, as run. */
  const keepIfBreaks = async (recipe: readonly Step[]): Promise<boolean> => {
    left--;
    const again = await replay(recipe);
    if (again?.violation.checkId !== found.violation.checkId || again.steps.length > best.steps.length) return false;
    best = again;
    return true;
  };
  const withoutFills = best.steps.filter((step) => step.kind !== 'fill');
  if (withoutFills.length > 0 && withoutFills.length < best.steps.length && replaysLeft())
    await keepIfBreaks(withoutFills);
  // A fill that is needed is often all that is (many volumes, then a slow fingerprint), or
  // needed only for its first volume.
  for (const step of best.steps.filter((s) => s.kind === 'fill'))
    if (best.steps.length > 1 && replaysLeft() && (await keepIfBreaks([step]))) return best;
  for (let i = 0; i < best.steps.length && replaysLeft(); i++) {
    const step = best.steps[i]!;
    if (step.kind === 'fill' && step.count > 1)
      await keepIfBreaks(best.steps.map((s, j) => (j === i ? { kind: 'fill', count: 1 } : s)));
  }
  // Plainer calls before any drop: a killed create is timing, and a busy machine made
  // every drop after one break or not by chance.
  for (let i = best.steps.length - 1; i >= 0 && replaysLeft(); i--) {
    const step = best.steps[i];
    const simpler = step && plainer(step);
    if (simpler !== undefined) await keepIfBreaks(best.steps.map((s, j) => (j === i ? simpler : s)));
  }
  // From the end: a step near the failure is the likeliest to matter, and dropping it
  // changes nothing before it. A recipe has a dozen steps at most, so one at a time.
  for (let i = best.steps.length - 1; i >= 0 && best.steps.length > 1 && replaysLeft(); i--)
    await keepIfBreaks(best.steps.filter((_, j) => j !== i));
  for (let i = best.steps.length - 1; i >= 0 && replaysLeft(); i--) {
    const step = best.steps[i];
    if (step?.kind !== 'together') continue;
    for (let c = step.calls.length - 1; c >= 0 && replaysLeft(); c--) {
      const calls = step.calls.filter((_, j) => j !== c);
      const fewer: Step = calls.length === 1 ? calls[0]! : { kind: 'together', calls };
      if (await keepIfBreaks(best.steps.map((s, j) => (j === i ? fewer : s)))) break;
    }
  }
  return best;
}

/** The step as a plainer one (a create not killed, not large), or undefined when it is as plain as it gets. */
function plainer(step: Step): Step | undefined {
  if (step.kind === 'kill-create') return { kind: 'create', volume: step.volume, large: false };
  if (step.kind === 'create' && step.large) return { ...step, large: false };
  if (step.kind !== 'together') return undefined;
  const calls = step.calls.map((call) => (plainer(call) as VolumeCall | undefined) ?? call);
  return calls.some((call, i) => call !== step.calls[i]) ? { kind: 'together', calls } : undefined;
}
