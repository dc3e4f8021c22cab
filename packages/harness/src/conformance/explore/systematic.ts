import { join } from 'node:path';
import type { CheckContext } from '../types.js';
import { canCrowd } from './crowded-table.js';
import { conditionUnavailable } from './host-conditions.js';
import type { Ending, VolumeLab } from './lab.js';
import { VOLUMES_DIR_CONDITIONS, type Step, type VolumeKey } from './recipe.js';
import { classify, type DefectClass } from './defect-classes.js';
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

/** A break the phase found, tightened, with its verdict. */
export interface SystematicFinding {
  found: LabFinding;
  verdict: Verdict;
  /** The steps of the scenario that broke, as run, before tightening. */
  shrunkFrom: number;
  /** The classes of the scenario that broke ([] for the measurement of the plugin's pace). */
  classes: DefectClass[];
}

export interface SystematicOutcome {
  /** Each distinct break (one per check and class), the required ones first, in the scenarios' order. */
  findings: SystematicFinding[];
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
 * with every volume's delete. Every scenario runs, whatever broke before it; each distinct
 * break (DistinctBreaks) is tightened by at most `replays` replays, as the random search's
 * breaks are. A required break in the measurement ends the phase before any scenario.
 */
export async function systematicPhase(
  ctx: CheckContext,
  runLab: RunLab,
  { replays, createTimes }: { replays: number; createTimes: readonly CreateTime[] },
): Promise<SystematicOutcome> {
  const pace: PluginPace = { createMs: 0, deleteWithDataMs: 0 };
  const measuring = await runLab((lab) => measurePace(lab, pace), false, 'deletes');
  const refused: string[] = [];
  const broken = new DistinctBreaks();
  if (measuring) broken.add(measuring, []);
  const first = broken.required();
  const crowded = first === undefined && (await canCrowd(join(ctx.sandbox, 'crowded-probe'), ctx.plugin));
  if (first === undefined && !crowded)
    ctx.note(
      "the restores under a crowded mount table were left out (restore-fails is then judged by the restarts alone): they run in a mount namespace of dhv's own, as root only",
    );
  const volumesDirs = VOLUMES_DIR_CONDITIONS.filter((condition) => {
    const why = conditionUnavailable(condition);
    if (why !== undefined && first === undefined)
      ctx.note(`the volumes-dir ${condition} scenario was left out: ${why}`);
    return why === undefined;
  });
  const all = first === undefined ? scenarios(pace, parameterSets(ctx), { crowded, volumesDirs }) : [];
  let ran = 0;
  // Every scenario, whatever broke before it: a plugin with two defects shows both in one run.
  for (const batch of batches(all)) {
    ctx.signal.throwIfAborted();
    ran += batch.length;
    const results = await Promise.all(batch.map((scenario) => runScenario(scenario, runLab)));
    // In the scenarios' order, whichever answered first: the same plugin gets the same verdicts.
    for (const [i, found] of results.entries()) {
      const scenario = batch[i]!;
      if (found === undefined) continue;
      if (scenario.probe && found.steps.length === 1 && found.violation.checkId === 'explore.calls-succeed')
        refused.push(`${describe(scenario)}: ${found.violation.message}`);
      else broken.add(found, scenario.classes);
    }
  }
  const findings: SystematicFinding[] = [];
  for (const { found, classes } of broken.all()) {
    ctx.signal.throwIfAborted();
    const target = found.violation.checkId;
    const replay = (recipe: readonly Step[]) =>
      runLab(
        async (lab) => {
          for (const step of recipe) await lab.runWherePossible(step);
        },
        target === RECOMMENDED_EXPLORE_CHECK,
        'deletes',
      );
    const settled = await settle(found, replay, { replays, createTimes, classes });
    findings.push({ ...settled, shrunkFrom: found.steps.length, classes });
  }
  return { findings, scenarios: ran, refused };
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

/**
 * The breaks of a run, one per check and the class the break itself shows (classify, not
 * the scenario's: one defect met by several scenarios is one finding), the first seen of
 * each. A retry that fails after a killed create is one defect wherever the kill fell.
 */
class DistinctBreaks {
  private readonly seen = new Map<string, { found: LabFinding; classes: DefectClass[] }>();

  add(found: LabFinding, classes: DefectClass[]): void {
    const { checkId } = found.violation;
    const shown = classify(checkId, found.steps, found.violation);
    const key = `${checkId} ${shown === 'killed-create-lock' ? 'killed-create-part-way' : shown}`;
    if (!this.seen.has(key)) this.seen.set(key, { found, classes });
  }

  required(): LabFinding | undefined {
    return this.all().find(({ found }) => found.violation.checkId !== RECOMMENDED_EXPLORE_CHECK)?.found;
  }

  /** The required breaks first: a leftover is reported beside them, never before. */
  all(): { found: LabFinding; classes: DefectClass[] }[] {
    const breaks = [...this.seen.values()];
    const cosmetic = (b: { found: LabFinding }) => b.found.violation.checkId === RECOMMENDED_EXPLORE_CHECK;
    return [...breaks.filter((b) => !cosmetic(b)), ...breaks.filter(cosmetic)];
  }
}

function describe(scenario: Scenario): string {
  return `the ${scenario.classes.join(' and ')} scenario`;
}
