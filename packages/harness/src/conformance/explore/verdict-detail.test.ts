import { describe, expect, it } from 'vitest';
import { DEFECT_CLASSES } from './defect-classes.js';
import { formatRecipe, parseRecipe, type Step } from './recipe.js';
import { replaysWords, settle, TIMES_REPLAYED, verdictOf, type Broken } from './verdict-detail.js';
import { Violation } from './violation.js';

const CHECK = 'explore.calls-succeed';
const MiB = 1024n * 1024n;

/**
 * A plugin stand-in: a replay breaks CHECK when the recipe as it would run matches `needs`,
 * and then only on every `every`-th such replay (1: every time), at the recipe's last step.
 */
function fakePlugin(needs: RegExp, every = 1) {
  let tries = 0;
  const replays: string[] = [];
  const replay = async (recipe: readonly Step[]): Promise<Broken | undefined> => {
    const created = new Set<string>();
    const ran = recipe.filter((step) => {
      if (step.kind === 'create' || step.kind === 'kill-create') created.add(step.volume.name);
      return !('volume' in step) || created.has(step.volume.name);
    });
    replays.push(formatRecipe(ran));
    if (!needs.test(formatRecipe(ran)) || ++tries % every !== 0) return undefined;
    return broken(ran);
  };
  return { replay, replays };
}

function broken(steps: Step[], message = 'the restore of long-3 failed: exit status 1'): Broken {
  const violation = new Violation(CHECK, message);
  violation.step = steps[steps.length - 1];
  violation.call = { kind: 'restore', volume: { namespace: 'default', name: 'long-3' } };
  return { violation, steps };
}

const BUDGET = { replays: 40, createTimes: [] };

describe('settling a finding', () => {
  it('counts a break that happens every time as such, and says nothing of how often', async () => {
    const { replay } = fakePlugin(/fill 14/);
    const { found, verdict } = await settle(
      broken(parseRecipe('create a; delete a; create b; fill 14')),
      replay,
      BUDGET,
    );
    expect(formatRecipe(found.steps)).toBe('fill 14');
    expect(verdict.replays).toEqual({ broke: TIMES_REPLAYED, of: TIMES_REPLAYED });
    expect(replaysWords(verdict.replays)).toBe('');
  });

  it('reports a break that happens some of the time as k of n, never as for ever, with every incidental step dropped', async () => {
    // Breaks one replay in four or five, and only with the fill: the steps around it are
    // incidental. Tried once each, shorter recipes that happen to pass keep some of them.
    for (const every of [4, 5])
      for (const recipe of [
        'create a; delete a; create b; restore b; fill 14',
        'create a; create c; delete a; create b; restore b; fill 14; fingerprint',
      ]) {
        const { replay, replays } = fakePlugin(/fill 14/, every);
        const { found, verdict } = await settle(broken(parseRecipe(recipe)), replay, BUDGET);
        expect(formatRecipe(found.steps), `every ${every}: ${recipe}`).toBe('fill 14');
        const { broke, of } = verdict.replays!;
        expect(of).toBe(TIMES_REPLAYED);
        expect(broke).toBeGreaterThan(0);
        expect(broke).toBeLessThan(TIMES_REPLAYED);
        const words = replaysWords(verdict.replays);
        expect(words).toContain(`it broke in ${broke} of ${TIMES_REPLAYED} replays of this recipe`);
        expect(words).toContain('it fails some of the time, not every time');
        expect(words).not.toMatch(/for ever\b/);
        // Bounded: the tightening's replays and the two counts.
        expect(replays.length).toBeLessThanOrEqual(BUDGET.replays + 2 * TIMES_REPLAYED);
      }
  });

  it('says so when the shrunk recipe never broke again', () => {
    expect(replaysWords({ broke: 0, of: 5 })).toBe(
      ' (it broke in the search but in none of 5 replays of this recipe: it fails some of the time, not every time)',
    );
  });
});

describe("a finding's verdict", () => {
  it('names its class and carries the stderr of the step that broke the model', () => {
    const found = broken(parseRecipe('create db; restore db'), 'the data written into db is gone');
    const lost = new Violation('explore.volumes-survive', 'the data written into db is gone');
    lost.step = found.steps[1];
    lost.stderr = 'the restore of db: rebuilding /v/db under /v/.db.tmp';
    const verdict = verdictOf({ violation: lost, steps: found.steps }, undefined, []);
    expect(verdict.details).toEqual([
      `defect class restore-rebuilds: ${DEFECT_CLASSES['restore-rebuilds']}`,
      "the plugin's stderr ended, in the restore of db: rebuilding /v/db under /v/.db.tmp",
    ]);
  });

  it("states the agent's deadlines, and which volumes reach them, for a killed create's retry", () => {
    const steps = parseRecipe('kill-create db');
    const violation = new Violation(CHECK, 'the create of db after one was killed failed: exit status 1');
    violation.step = steps[0];
    violation.call = steps[0] as Extract<Step, { kind: 'kill-create' }>;
    violation.stderr = '';
    const times = [
      { capacityBytes: 0n, durationMs: 100 },
      { capacityBytes: 0n, durationMs: 101 },
      { capacityBytes: 32n * MiB, durationMs: 288 },
      { capacityBytes: 32n * MiB, durationMs: 287 },
    ];
    const verdict = verdictOf({ violation, steps }, undefined, times);
    expect(verdict.defectClass).toBe('killed-create-lock');
    expect(verdict.details).toHaveLength(2);
    expect(verdictOf({ violation, steps }, undefined, times, ['killed-create-part-way']).defectClass).toBe(
      'killed-create-part-way',
    );
    expect(verdict.details[1]).toMatch(
      /^the agent kills creates at their deadline: restore gives all volumes one 50 s deadline from its start and kills plugins past it; create and delete are killed at 60 s\. This create takes about 6\.0 s per GiB .* so volumes over about 10 GiB meet this at any create/,
    );
  });
});
