import type { Check, CheckContext } from '../types.js';
import { explore, type ExploreOutcome, type Finding } from './explorer.js';
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
      const own = outcome.findings.filter((f) => f.checkId === id);
      const others = [
        ...new Set(outcome.findings.map((f) => f.checkId).filter((c) => c !== id && c !== RECOMMENDED_EXPLORE_CHECK)),
      ];
      if (own.length === 0 && others.length === 0) return void ctx.note(describeSearch(outcome));
      if (own.length === 0)
        ctx.skip(`the exploration stopped at a failure of ${others.join(' and ')}, so this was not judged to the end`);
      for (const [i, finding] of own.entries()) {
        if (own.length > 1) ctx.note(`finding ${i + 1} of ${own.length}, ${finding.verdict.defectClass}:`);
        finding.steps.forEach((step, n) => ctx.note(`${n + 1}. ${formatStep(step)}`));
        const found = foundBy(finding);
        if (found !== undefined && own.length > 1) ctx.note(found);
      }
      ctx.note(describeSearch(outcome, own.length === 1 ? foundBy(own[0]!) : undefined));
      ctx.fail(own.map((finding) => failure(finding, outcome.replayed, ctx.plugin)).join('\n\n'));
    },
  }));

/** A finding as its check's failure says it: Nomad's words, how often, its recipe and how to replay it, then its verdict. */
function failure(finding: Finding, replayed: boolean, plugin: string): string {
  const recipe = formatRecipe(finding.steps);
  const shrunk = replayed || finding.shrunkFrom === finding.steps.length ? '' : ` (shrunk from ${finding.shrunkFrom})`;
  const { replays, details } = finding.verdict;
  return [
    `${finding.message}${replaysWords(replays)}, after ${finding.steps.length === 1 ? 'this step' : `these ${finding.steps.length} steps`}${shrunk}; replay: dhv check ${plugin} --replay '${recipe}'`,
    ...details,
  ].join('\n');
}

/** Which of the systematic phase's scenarios found it; undefined for a random sequence's. */
function foundBy(finding: Finding): string | undefined {
  if (finding.scenario === undefined) return undefined;
  return `found by the systematic phase's ${finding.scenario.length > 0 ? `scenario for ${finding.scenario.join(' and ')}` : 'measurement of the plugin'}`;
}

/** What the search did; `found`: foundBy of the one finding this check reports, when the phase found it. */
function describeSearch(outcome: ExploreOutcome, found?: string): string {
  const seconds = (outcome.durationMs / 1000).toFixed(1);
  if (outcome.replayed) return `replayed one sequence (${outcome.calls} calls) in ${seconds} s`;
  const phase = outcome.systematic;
  if (phase !== undefined && outcome.findings.length > 0 && outcome.runs === 0)
    return `${found ?? "found by the systematic phase's scenarios"} (${phase.scenarios} scenarios, ${outcome.calls} calls in ${seconds} s, shrinking included), before any random sequence`;
  const planned =
    phase === undefined
      ? ''
      : `ran ${phase.scenarios} systematic scenarios, one per defect class${phase.refused.length > 0 ? ` (${phase.refused.length} did not apply: the plugin refused their parameters)` : ''}, then `;
  return `${planned}explored ${outcome.runs} random sequences (${outcome.calls} calls, creates killed after ${KILL_AFTER_MS} ms, a ${MARKER_FILE} file in every volume) in ${seconds} s; seed ${outcome.seed} (--seed ${outcome.seed} runs the same sequences, --runs N more of them)`;
}
