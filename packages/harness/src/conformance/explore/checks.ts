import type { Check, CheckContext } from '../types.js';
import { explore, type ExploreOutcome } from './explorer.js';
import { KILL_AFTER_MS } from './agent-calls.js';
import { StepNotPossible } from './violation.js';
import { MARKER_FILE } from './volume-disk.js';
import { MAX_LIVE } from './volume-book.js';
import { formatRecipe, formatStep } from './recipe.js';
import { replaysWords } from './verdict-detail.js';
import { EXPLORE_CHECK_IDS, RECOMMENDED_EXPLORE_CHECK, type ExploreCheckId } from './verdicts.js';

const REF = 'PROTOCOL.md § create, § delete, "Restore on restart"';

const REQUIREMENTS: Record<ExploreCheckId, { title: string; gradeReason: string }> = {
  'explore.volumes-survive': {
    title: `Through any sequence of the agent's calls (creates, restores, deletes of other volumes, the cleanup delete, restarts, killed creates), every live volume keeps its path and the data written into it.`,
    gradeReason: "a volume emptied or removed by another call is a workload's data lost",
  },
  'explore.volumes-distinct': {
    title: 'Through any sequence of calls, no two live volumes share a path or nest inside each other.',
    gradeReason: "two workloads writing into one directory mix and overwrite each other's data",
  },
  'explore.calls-succeed': {
    title:
      'Every call a normal agent makes in that sequence succeeds: a name can be used again after its delete, a killed create does not block the next one, the eleventh volume is created like the first.',
    gradeReason:
      'a failed create or delete leaves the volume (or every new one) blocked on that node until a later call succeeds, if one ever does',
  },
  'explore.fingerprint-fast': {
    title: 'fingerprint stays within its 1 s deadline however many volumes the node holds.',
    gradeReason: 'discovery gives a fingerprint 1 s and skips the plugin past it: the node stops publishing it',
  },
  'explore.releases-host-resources': {
    title:
      'Through any sequence of calls, every successful delete releases what its volume held on the host: no loop device backed by its files and no mount of it (at or below its path, or named after it) is left.',
    gradeReason:
      "nothing on the node releases them after a delete: each leaked loop device keeps its image's space, and the node runs out of loop devices after a few hundred deletes",
  },
  'explore.nothing-left': {
    title: 'After every volume is deleted, nothing of them is left in the volumes dir.',
    gradeReason:
      'files left behind are a leak of disk space, not a failure: no data is lost and nothing under Nomad breaks',
  },
};

/**
 * Each check judges one part of the model; one exploration per run serves them all.
 * `needs`: the catalogue's checks without which no sequence can run (a create that works).
 */
export const exploreChecks = (needs: readonly string[]): Check[] =>
  (Object.keys(REQUIREMENTS) as ExploreCheckId[]).map((id) => ({
    id,
    area: 'explore',
    ...REQUIREMENTS[id],
    protocolRef: REF,
    severity: id === RECOMMENDED_EXPLORE_CHECK ? 'recommended' : 'required',
    asks: `one exploration for the ${EXPLORE_CHECK_IDS.length} checks: up to ${MAX_LIVE} volumes at a time at the capacities given, some with a larger capacity_min (twice capacity_min, else 32 MiB, never past the capacity bound)`,
    needs,
    // It runs many plugin calls back to back and judges a fingerprint's time.
    alone: true,
    async run(ctx: CheckContext) {
      const outcome = await ctx
        .shared('explore', (c) => explore(c, c.settings.explore))
        .catch((err: unknown) =>
          err instanceof StepNotPossible ? ctx.skip(`the replay recipe: ${err.message}`) : Promise.reject(err),
        );
      const { finding } = outcome;
      if (finding === undefined || (finding.checkId !== id && finding.checkId === RECOMMENDED_EXPLORE_CHECK))
        return void ctx.note(describeSearch(outcome));
      if (finding.checkId !== id)
        ctx.skip(`the exploration stopped at a failure of ${finding.checkId}, so this was not judged to the end`);
      finding.steps.forEach((step, i) => ctx.note(`${i + 1}. ${formatStep(step)}`));
      ctx.note(describeSearch(outcome));
      const recipe = formatRecipe(finding.steps);
      const shrunk =
        outcome.replayed || finding.shrunkFrom === finding.steps.length ? '' : ` (shrunk from ${finding.shrunkFrom})`;
      const { replays, details } = finding.verdict;
      ctx.fail(
        [
          `${finding.message}${replaysWords(replays)}, after ${finding.steps.length === 1 ? 'this step' : `these ${finding.steps.length} steps`}${shrunk}; replay: dhv check ${ctx.plugin} --replay '${recipe}'`,
          ...details,
        ].join('\n'),
      );
    },
  }));

function describeSearch(outcome: ExploreOutcome): string {
  const seconds = (outcome.durationMs / 1000).toFixed(1);
  if (outcome.replayed) return `replayed one sequence (${outcome.calls} calls) in ${seconds} s`;
  const phase = outcome.systematic;
  if (phase !== undefined && outcome.finding !== undefined && outcome.runs === 0)
    return `found by the systematic phase's ${phase.classes.length > 0 ? `scenario for ${phase.classes.join(' and ')}` : 'measurement of the plugin'} (${phase.scenarios} scenarios, ${outcome.calls} calls in ${seconds} s, shrinking included), before any random sequence`;
  const planned =
    phase === undefined
      ? ''
      : `ran ${phase.scenarios} systematic scenarios, one per defect class${phase.refused.length > 0 ? ` (${phase.refused.length} did not apply: the plugin refused their parameters)` : ''}, then `;
  return `${planned}explored ${outcome.runs} random sequences (${outcome.calls} calls, creates killed after ${KILL_AFTER_MS} ms, a ${MARKER_FILE} file in every volume) in ${seconds} s; seed ${outcome.seed} (--seed ${outcome.seed} runs the same sequences, --runs N more of them)`;
}
