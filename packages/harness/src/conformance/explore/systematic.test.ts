import { afterEach, describe, expect, it } from 'vitest';
import type { CheckContext } from '../types.js';
import type { VolumeLab } from './lab.js';
import { formatRecipe, formatVolume, type Step } from './recipe.js';
import { systematicPhase, type LabFinding, type RunLab } from './systematic.js';
import { StepNotPossible, Violation } from './violation.js';
import { removeTempDir, tempDir } from '../../../../../test/support/kit.js';

/**
 * The systematic phase against a plugin stand-in with two defects of different classes: a
 * cleanup delete that wipes another volume's data, and a retry that fails after any killed
 * create. Each scenario runs in a stand-in lab that breaks where the stand-in plugin would.
 */

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => removeTempDir(dir)));
});

/** A lab that records its steps, knows which volumes exist, and breaks at the two defects. */
function standInLab(): { lab: VolumeLab; history: Step[] } {
  const history: Step[] = [];
  const live = new Set<string>();
  const run = async (step: Step): Promise<void> => {
    history.push(step);
    if (step.kind === 'kill-create') {
      const violation = new Violation(
        'explore.calls-succeed',
        `the create of ${formatVolume(step.volume)} after one was killed failed: exit status 1`,
      );
      violation.call = step;
      violation.step = step;
      throw violation;
    }
    if (step.kind === 'cleanup-delete') {
      const violation = new Violation('explore.volumes-survive', 'the data written into prod/db is gone');
      violation.call = step;
      violation.step = step;
      throw violation;
    }
    if (step.kind === 'create') live.add(formatVolume(step.volume));
    if (step.kind === 'delete') live.delete(formatVolume(step.volume));
  };
  const possible = (step: Step) =>
    !('volume' in step) || step.kind === 'create' || step.kind === 'kill-create' || live.has(formatVolume(step.volume));
  const lab = {
    run: async (step: Step) => {
      if (!possible(step)) throw new StepNotPossible(`"${formatRecipe([step])}" cannot run`);
      await run(step);
    },
    runWherePossible: async (step: Step) => (possible(step) ? run(step) : undefined),
  } as unknown as VolumeLab;
  return { lab, history };
}

const runLab: RunLab = async (steps) => {
  const { lab, history } = standInLab();
  try {
    await steps(lab);
    return undefined;
  } catch (err) {
    if (err instanceof Violation) return { violation: err, steps: [...history] } satisfies LabFinding;
    throw err;
  }
};

async function context(): Promise<{ ctx: CheckContext; notes: string[] }> {
  const sandbox = await tempDir('systematic');
  dirs.push(sandbox);
  const notes: string[] = [];
  const ctx = {
    sandbox,
    plugin: '/bin/true',
    settings: { parameters: {} },
    signal: new AbortController().signal,
    note: (note: string) => void notes.push(note),
  } as unknown as CheckContext;
  return { ctx, notes };
}

describe('the systematic phase', () => {
  it('runs every scenario and reports each distinct break, each with its own recipe, class and count', async () => {
    const { ctx } = await context();
    const outcome = await systematicPhase(ctx, runLab, { replays: 40, createTimes: [] });
    expect(
      outcome.findings.map((f) => [f.found.violation.checkId, f.verdict.defectClass, formatRecipe(f.found.steps)]),
    ).toEqual([
      ['explore.volumes-survive', 'cleanup-wipes-records', 'create db; cleanup-delete db'],
      ['explore.calls-succeed', 'killed-create-lock', 'kill-create db'],
    ]);
    expect(outcome.findings.map((f) => f.verdict.replays)).toEqual([
      { broke: 5, of: 5 },
      { broke: 5, of: 5 },
    ]);
    // The cleanup scenario's recipe, tightened: its other volume was not needed.
    expect(outcome.findings[0]!.shrunkFrom).toBe(3);
    // Past the first break: the scenarios after it ran too.
    expect(outcome.scenarios).toBeGreaterThan(10);
  });

  it('reports a retry that fails after a kill once, whichever of the kill scenarios met it first', async () => {
    const { ctx } = await context();
    const { findings } = await systematicPhase(ctx, runLab, { replays: 40, createTimes: [] });
    const kills = findings.filter((f) => f.found.steps.some((step) => step.kind === 'kill-create'));
    expect(kills).toHaveLength(1);
    expect(kills[0]!.verdict.details.join('\n')).toContain('the agent kills creates at their deadline');
  });
});
