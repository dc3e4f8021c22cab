import { join } from 'node:path';
import type { CheckContext } from '../types.js';
import { canCrowd } from './crowded-table.js';
import type { Ending, VolumeLab } from './lab.js';
import type { Step, VolumeKey } from './recipe.js';
import type { DefectClass } from './defect-classes.js';
import { mkdirParameterSets, scenarios, type PluginPace, type Scenario } from './scenarios.js';
import type { CreateTime } from './create-speed.js';
import { settle, type Verdict } from './verdict-detail.js';
import { RECOMMENDED_EXPLORE_CHECK } from './verdicts.js';
import type { Violation } from './violation.js';

export type LabFinding = { violation: Violation; steps: Step[] };

/** Runs `steps` in a fresh lab; the break found, if any (the cosmetic one when nothing worse). */
export type RunLab = (
  steps: (lab: VolumeLab) => Promise<unknown>,
  stopAtCosmetic: boolean,
  ending: Ending,
) => Promise<LabFinding | undefined>;

export interface SystematicOutcome {
  /** The first required break, tightened; else the first cosmetic one, tightened; with its verdict. */
  found: { found: LabFinding; verdict: Verdict } | undefined;
  /** The steps of the scenario that broke, as run, before tightening. */
  shrunkFrom: number;
  /** The classes of the scenario that broke. */
  classes: DefectClass[];
  /** Scenarios run (the pace's measurement not counted). */
  scenarios: number;
  /** Scenarios that did not apply: the plugin refused what their first step asked for. */
  refused: string[];
}

const key = (name: string): VolumeKey => ({ namespace: 'default', name });
/** Names no prefix, guard or slot of another confuses: the measurement is no scenario. */
const MEASURED = ['alpha', 'bravo', 'charlie'];

/**
 * The systematic phase: the plugin's pace measured (three creates, a delete of a volume
 * holding data), then each scenario of the README's classes in a lab of its own, ending
 * with every volume's delete. The first scenario with a required break ends the phase; it
 * is tightened by at most `replays` replays, as the random search's breaks are.
 */
export async function systematicPhase(
  ctx: CheckContext,
  runLab: RunLab,
  { replays, createTimes }: { replays: number; createTimes: readonly CreateTime[] },
): Promise<SystematicOutcome> {
  const pace: PluginPace = { createMs: 0, deleteWithDataMs: 0 };
  const measuring = await runLab((lab) => measurePace(lab, pace), false, 'deletes');
  const refused: string[] = [];
  let first: { found: LabFinding; classes: DefectClass[] } | undefined =
    measuring && !isCosmetic(measuring) ? { found: measuring, classes: [] } : undefined;
  let cosmetic = measuring && isCosmetic(measuring) ? { found: measuring, classes: [] as DefectClass[] } : undefined;
  const crowded = first === undefined && (await canCrowd(join(ctx.sandbox, 'crowded-probe'), ctx.plugin));
  if (first === undefined && !crowded)
    ctx.note(
      "the restores under a crowded mount table were left out (restore-fails is then judged by the restarts alone): they run in a mount namespace of dhv's own, as root only",
    );
  const all = first === undefined ? scenarios(pace, parameterSets(ctx), { crowded }) : [];
  let ran = 0;
  for (const batch of batches(all)) {
    ctx.signal.throwIfAborted();
    ran += batch.length;
    const results = await Promise.all(batch.map((scenario) => runScenario(scenario, runLab)));
    // In the scenarios' order, whichever answered first: the same plugin gets the same verdict.
    for (const [i, found] of results.entries()) {
      const scenario = batch[i]!;
      if (found === undefined) continue;
      if (scenario.probe && found.steps.length === 1 && found.violation.checkId === 'explore.calls-succeed')
        refused.push(`${describe(scenario)}: ${found.violation.message}`);
      else if (isCosmetic(found)) cosmetic ??= { found, classes: scenario.classes };
      else first ??= { found, classes: scenario.classes };
    }
    if (first !== undefined) break;
  }
  const chosen = first ?? cosmetic;
  if (chosen === undefined) return { found: undefined, shrunkFrom: 0, classes: [], scenarios: ran, refused };
  const target = chosen.found.violation.checkId;
  const replay = (recipe: readonly Step[]) =>
    runLab(
      async (lab) => {
        for (const step of recipe) await lab.runWherePossible(step);
      },
      target === RECOMMENDED_EXPLORE_CHECK,
      'deletes',
    );
  const found = await settle(chosen.found, replay, { replays, createTimes, classes: chosen.classes });
  return { found, shrunkFrom: chosen.found.steps.length, classes: chosen.classes, scenarios: ran, refused };
}

/** Scenarios run two at a time (a run is a fresh volumes dir), but those that judge by time alone. */
const LANES = 2;

function batches(all: readonly Scenario[]): Scenario[][] {
  const out: Scenario[][] = [];
  for (const scenario of all) {
    const last = out.at(-1);
    if (!scenario.alone && last !== undefined && last.length < LANES && !last[0]!.alone) last.push(scenario);
    else out.push([scenario]);
  }
  return out;
}

function runScenario(scenario: Scenario, runLab: RunLab): Promise<LabFinding | undefined> {
  return runLab(
    async (lab) => {
      for (const step of scenario.steps) await lab.run(step);
    },
    false,
    'deletes',
  );
}

/** Three creates of new volumes (the middle one's time is the pace: the first may pay a cold start), one delete with data. */
async function measurePace(lab: VolumeLab, pace: PluginPace): Promise<void> {
  const times: number[] = [];
  for (const name of MEASURED) {
    const started = performance.now();
    await lab.run({ kind: 'create', volume: key(name), large: false });
    times.push(performance.now() - started);
  }
  pace.createMs = times.sort((a, b) => a - b)[1]!;
  await lab.run({ kind: 'write', volume: key(MEASURED[0]!) });
  const started = performance.now();
  await lab.run({ kind: 'delete', volume: key(MEASURED[0]!) });
  pace.deleteWithDataMs = performance.now() - started;
}

/** The user's own parameters (`--param`), when given, then each set of the built-in mkdir's. */
function parameterSets(ctx: CheckContext): Record<string, string>[] {
  const own = ctx.settings.parameters ?? {};
  const mkdir = mkdirParameterSets(process.getuid?.(), process.getgid?.());
  return Object.keys(own).length > 0 ? [own, ...mkdir] : mkdir;
}

const isCosmetic = (found: LabFinding) => found.violation.checkId === RECOMMENDED_EXPLORE_CHECK;

function describe(scenario: Scenario): string {
  return `the ${scenario.classes.join(' and ')} scenario`;
}
