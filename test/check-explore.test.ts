import { copyFile, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import {
  CATALOGUE,
  DEFAULT_EXPLORE_RUNS,
  conformanceTests,
  runConformance,
  type CheckResult,
  type ConformanceReport,
} from '@dhv/harness';
import { SUITE_TIMEOUT_MS as CHECK_TIMEOUT_MS, dhvCheck, failedRequired } from './support/check-cli.js';
import { CORRECT_STATEFUL, expectPassesSeeds } from './support/explore-seeds.js';
import { HARNESS_FIXTURES as FIXTURES, removeTempDir, runDhv, tempDir } from './support/kit.js';

/**
 * The explorer (the explore checks of `dhv check`) against stateful plugins of our own:
 * each defective one breaks only under a sequence of calls that a real agent makes
 * (every catalogue check passes it), and must be found within the default number of
 * sequences and shrunk to a short recipe; each correct one must pass whatever the seed.
 */
const STATEFUL = join(FIXTURES, 'stateful');
/** One seed for the whole file, so that a failure here is rerun exactly with the seed it prints. */
const SEED = 24;

interface Defect {
  /** The explore check that must fail. */
  check: string;
  /** The defect is a race: replaying its recipe shows it only when the timing repeats, and a search may miss it once. */
  racy?: boolean;
  /** What the plugin writes on stderr when it fails, which the verdict must show beside Nomad's words. */
  stderr?: RegExp;
  /** The defect class its verdict names (README, "Defect classes"). */
  defectClass: string;
  /** The class of the README's list whose systematic scenario must find it. */
  foundBy?: string;
  /** The defect breaks some of the time: the verdict says how often, and one replay may pass. */
  sometimes?: boolean;
  /** More the verdict must say. */
  says?: RegExp[];
  /** It makes mounts, and its defect shows only under a host condition dhv makes as root. */
  root?: boolean;
  /** Judged through the command line: `dhv check --json` as a user runs it, then `--replay` of the recipe it printed. */
  cli?: boolean;
  /** Where its volumes dir must be, when the suite's TMPDIR (a tmpfs, scripts/suite-tmpdir.mjs) would hide the defect. */
  volumesDirUnder?: string;
}

const DEFECTS: Record<string, Defect> = {
  'slot-reuse': { check: 'explore.volumes-distinct', defectClass: 'slot-reuse' },
  'slot-string-order': { check: 'explore.calls-succeed', defectClass: 'string-order' },
  'guard-leaks': { check: 'explore.calls-succeed', defectClass: 'guard-leak' },
  'guard-prefix': { check: 'explore.calls-succeed', defectClass: 'guard-prefix' },
  'delete-prefix-sweep': { check: 'explore.volumes-survive', defectClass: 'delete-prefix-sweep' },
  'restore-rebuilds': { check: 'explore.volumes-survive', defectClass: 'restore-rebuilds', cli: true },
  'restart-lost-update': { check: 'explore.volumes-survive', racy: true, defectClass: 'restart-lost-update' },
  'killed-create-lock': {
    check: 'explore.calls-succeed',
    racy: true,
    stderr: /\(the plugin's stderr ended: killed-create-lock: \S+\.creating-\S+ is held since [0-9:]+\)/,
    defectClass: 'killed-create-lock',
    // Its creates sleep 0.6 s whatever the capacity: a busy host may still make one capacity
    // look slower, so only the deadlines are asserted here (create-speed.test.ts judges the speed).
    says: [
      /\nthe agent kills creates at their deadline: restore gives all volumes one 50 s deadline from its start and kills plugins past it; create and delete are killed at 60 s\. (How long this plugin's create takes per byte cannot be measured: |This create takes about )/,
    ],
  },
  'cleanup-wipes-records': { check: 'explore.volumes-survive', defectClass: 'cleanup-wipes-records' },
  // Its verdict is a time against a node-wide index beside the plugin, which the catalogue's
  // volumes fill too: the recipe shrunk in a whole check may stay under the deadline alone.
  'fingerprint-scans': { check: 'explore.fingerprint-fast', racy: true, defectClass: 'fingerprint-scan' },
  'name-truncation': { check: 'explore.volumes-distinct', defectClass: 'name-truncation' },
  'restore-flaky-crowded': {
    check: 'explore.calls-succeed',
    sometimes: true,
    stderr: /\(the plugin's stderr ended: restore-flaky-crowded: \S+ is already made\)/,
    defectClass: 'restore-fails',
    says: [/ \(it broke in [1-4] of 5 replays of this recipe: it fails some of the time, not every time\)/],
  },
  // A host condition (issue 37): found only by restores under a mount table crowded as a
  // real client's, which the verdict names beside how the same restore does without it.
  'restore-mount-tail': {
    check: 'explore.calls-succeed',
    root: true,
    foundBy: 'restore-fails',
    defectClass: 'restore-fails',
    stderr:
      /\(the plugin's stderr ended: restore-mount-tail: \S+ is not mounted but holds files: refusing to mount over them\)/,
    says: [
      /restore of db \(its saved create request again\) under a mount table of \d+ KiB \(\d+ extra mounts, as the tasks' tmpfs and secrets mounts make on a busy client\) failed: /,
      /; run again, the same restore failed 10 of 10 times under that table and passed 5 of 5 times without those mounts: the size of the mount table decides it/,
    ],
  },
  // The three classes the random search reached only by luck (issue 37), each found by the
  // systematic phase's scenario for it: a kill at a point of the plugin's own create time,
  // a create started while a delete wipes its data, a restore with mkdir's `mode`.
  'half-written-image': {
    check: 'explore.calls-succeed',
    racy: true,
    foundBy: 'killed-create-part-way',
    defectClass: 'killed-create-part-way',
    stderr: /\(the plugin's stderr ended: half-written-image: \S+\.img: bad superblock, not a formatted image\)/,
  },
  'namespace-last-out': {
    check: 'explore.volumes-survive',
    racy: true,
    // Its window is shred's sync of each file to the disk, which on a tmpfs takes no time.
    volumesDirUnder: '/var/tmp',
    foundBy: 'delete-overlaps-create',
    defectClass: 'delete-overlaps-create',
  },
  'mode-rebuild': {
    check: 'explore.volumes-survive',
    foundBy: 'restore-with-parameters',
    defectClass: 'restore-with-parameters',
  },
  // A kill at the plugin's own first write (issue 37): its damage lies between its first write
  // and a step 100 ms later, long before the first of the kills by time (10 % of its 2 s).
  'record-before-folder': {
    check: 'explore.calls-succeed',
    racy: true,
    foundBy: 'killed-create-part-way',
    defectClass: 'killed-create-part-way',
    says: [/--replay 'kill-create db at write'/],
  },
  // Host conditions of a real client's volumes dir (issue 37), each found only by the scenario
  // that makes it, and named in the verdict.
  'fixed-record': {
    check: 'explore.calls-succeed',
    foundBy: 'long-volumes-dir',
    defectClass: 'long-volumes-dir',
    stderr:
      /\(the plugin's stderr ended: fixed-record: \S+ is held by volume \S+\), when the volumes dir's path is 255 characters long \(a volume's about 292\), as a client's deep data dir makes it/,
    says: [/--replay 'volumes-dir long; create db; create web'/],
  },
  'sweeps-strangers': {
    check: 'explore.volumes-survive',
    foundBy: 'volumes-dir-shared',
    defectClass: 'volumes-dir-shared',
    says: [
      /another plugin's volume \S+ in the volumes dir \(\S+\) is gone, when the volumes dir holds 24 volumes of other plugins/,
      /--replay 'volumes-dir shared; create db; restore db'/,
    ],
  },
  'build-in-tmp': {
    check: 'explore.calls-succeed',
    root: true,
    // On the filesystem of /tmp, where it builds its volumes.
    volumesDirUnder: '/tmp',
    foundBy: 'volumes-dir-other-fs',
    defectClass: 'volumes-dir-other-fs',
    stderr: /\(the plugin's stderr ended: build-in-tmp: rename \S+ to \S+: Invalid cross-device link\)/,
    says: [
      /, when the volumes dir is on another filesystem than \/tmp \(device \d+, \/tmp's \d+\): a tmpfs dhv mounted there/,
      /--replay 'volumes-dir other-fs; create db'/,
    ],
  },
};
const MAX_RECIPE_STEPS = 5;
/**
 * Seeds per correct plugin here: seed 1 runs the systematic phase (every class's scenario,
 * the same for every seed), seeds 1..3 six random sequences, three times plain `dhv check`'s.
 * An explorer that calls a correct plugin broken shows there: bench/TESTS.md's false alarm
 * (two live volumes whose names share their first four characters), put back by hand, failed
 * every plugin in the systematic phase, and again in the random sequences of seed 2 and of
 * seed 3 alone. The twenty seeds of issue 37, the breadth, are the soak's
 * (test/soak/explore-seeds.test.ts), which CI runs before `npm test`.
 */
const SEEDS = 3;

/**
 * Each search runs a fixed number of sequences whatever the time they take, so its time
 * limit is only a guard against a hang. Since the space watch and the cleanup journal came
 * into dhv check (issue 35), a search takes longer under the suite's own load: 160 to 240 s
 * each, beside other files, where 240 s was the limit. The slowdown is measured and left to
 * fix in the session's notes; the verdicts, not the time, are what this file judges.
 */
const SUITE_TIMEOUT_MS = 2.5 * CHECK_TIMEOUT_MS;

const scratch: string[] = [];
/** What a fixture copy may leave in /tmp when the explorer kills its create: `<name>.<its inode>.` (build-in-tmp). */
const stagePrefixes: string[] = [];
afterAll(async () => {
  const inTmp = await readdir('/tmp');
  const stages = inTmp.filter((entry) => stagePrefixes.some((prefix) => entry.startsWith(prefix)));
  await Promise.all(stages.map((entry) => rm(join('/tmp', entry), { recursive: true, force: true })));
  await Promise.all(scratch.map((dir) => removeTempDir(dir)));
});

/** A copy of the fixture in a fresh directory (fingerprint-scans keeps its index beside itself) and a volumes dir. */
async function fixtureCopy(name: string, base = tmpdir()): Promise<{ plugin: string; volumesDir: string }> {
  const dir = await tempDir(`explore-${name}`, base);
  scratch.push(dir);
  const plugin = join(dir, name);
  await copyFile(join(STATEFUL, name), plugin);
  stagePrefixes.push(`${name}.${(await stat(plugin)).ino}.`);
  return { plugin, volumesDir: join(dir, 'runs') };
}

/** The numbered steps of the check's first finding: a check reports each distinct one, each headed `finding i of n`. */
const recipeSteps = (result: CheckResult) => {
  const first = result.notes.findIndex((n) => /^finding [2-9]\d* of /.test(n));
  return result.notes.slice(0, first === -1 ? undefined : first).filter((n) => /^\d+\. /.test(n));
};
const recipeOf = (result: CheckResult) => /--replay '([^']*)'/.exec(result.reason ?? '')?.[1];
const explored = (report: ConformanceReport) => report.results.filter((r) => r.area === 'explore');
const EXPLORE_CHECKS = CATALOGUE.filter((c) => c.area === 'explore').map((c) => c.id);

describe.concurrent(`the correct stateful plugins pass the explorer with ${SEEDS} different seeds`, () => {
  for (const name of CORRECT_STATEFUL) {
    test(
      `${name} passes every explore check for seeds 1..${SEEDS}`,
      () => expectPassesSeeds(name, SEEDS),
      SUITE_TIMEOUT_MS,
    );
  }
});

// Five at once (vitest's default). Searching and shrinking are both bounded by runs, not
// time, so load only slows them. Plain `dhv check` but for the seed: the systematic phase
// drives each defect's class first, the random sequences follow, and a search that finds
// one stops there.
describe.concurrent('dhv check finds every sequence-only defect, and nothing else, and shrinks it', () => {
  for (const [name, defect] of Object.entries(DEFECTS)) {
    // Skipped, not passed, as another user: only root makes mounts.
    (defect.root && process.getuid?.() !== 0 ? test.skip : test)(
      `${name}: passes every required catalogue check, fails ${defect.check} ${defect.foundBy ? `by the ${defect.foundBy} scenario` : `in the systematic phase or within the default ${DEFAULT_EXPLORE_RUNS} sequences`}, in at most ${MAX_RECIPE_STEPS} steps${defect.racy || defect.sometimes ? '' : ', replayable'}, named ${defect.defectClass}${defect.cli ? ', on the command line' : ''}`,
      // A racy defect breaks only when the timing repeats, so a search may miss it once: one
      // retry, of the same seed, for those alone. Every other one breaks at the same sequence
      // whatever the load: a miss is a defect of the explorer.
      { timeout: SUITE_TIMEOUT_MS, retry: defect.racy ? 1 : 0 },
      async () => {
        const { plugin, volumesDir } = await fixtureCopy(name, defect.volumesDirUnder);
        if (defect.cli) return checkOnCommandLine(plugin, defect);
        // The catalogue and the explorer, as plain `dhv check` runs them but for the seed.
        // The tasks checks (real jobs, seconds each) are judged in test/check-tasks.test.ts.
        const report = await runConformance(plugin, { seed: SEED, volumesDir, skip: ['tasks'] });
        const found = expectFound(report, plugin, defect);
        // One replay of a defect that breaks some of the time may pass.
        if (!defect.racy && !defect.sometimes) {
          const replay = await runConformance(plugin, { only: ['explore'], replay: recipeOf(found), volumesDir });
          expect(failedRequired(replay)).toEqual([defect.check]);
        }
        expect(await readdir(volumesDir).catch(() => [])).toEqual([]);
      },
    );
  }
});

/** The report's verdict on a defect: it alone fails, found, shrunk and named as its entry says. */
function expectFound(report: ConformanceReport, plugin: string, defect: Defect): CheckResult {
  const found = report.results.find((r) => r.id === defect.check)!;
  expect(failedRequired(report), `${found.reason ?? ''} ${found.notes.join(' | ')}`).toEqual([defect.check]);
  expect(report.ok).toBe(false);
  const steps = recipeSteps(found);
  expect(steps.length).toBeGreaterThan(0);
  expect(steps.length, steps.join('; ')).toBeLessThanOrEqual(MAX_RECIPE_STEPS);
  expect(found.reason).toContain(`dhv check ${plugin} --replay '`);
  // Found by a systematic scenario, which names its class, or by a random sequence of the seed.
  const notes = found.notes.join(' ');
  expect(notes).toMatch(new RegExp(`seed ${SEED}|found by the systematic phase's scenario for `));
  if (defect.foundBy) expect(notes).toContain(`found by the systematic phase's scenario for ${defect.foundBy}`);
  if (defect.stderr) expect(found.reason).toMatch(defect.stderr);
  expect(found.reason).toContain(`\ndefect class ${defect.defectClass}: `);
  for (const says of defect.says ?? []) expect(found.reason).toMatch(says);
  expect(found.reason).not.toMatch(/for ever\b/);
  return found;
}

/**
 * The command line's front door: plain `dhv check` (the catalogue, then the explorer) exits 1
 * with the verdict the in-process runs give, and `--replay` of the recipe it printed runs just
 * that sequence and fails the same check.
 */
async function checkOnCommandLine(plugin: string, defect: Defect): Promise<void> {
  const run = await dhvCheck(plugin, ['--seed', String(SEED), '--skip', 'tasks']);
  expect(run.exitCode).toBe(1);
  expect(run.report.results.filter((r) => r.area !== 'explore').length).toBeGreaterThan(30);
  expect(run.leftovers).toEqual([]);
  const recipe = recipeOf(expectFound(run.report, plugin, defect));
  expect(recipe).toBeDefined();

  const replay = await dhvCheck(plugin, ['--replay', recipe!]);
  expect(replay.exitCode).toBe(1);
  expect(replay.report.results.every((r) => r.area === 'explore')).toBe(true);
  expect(failedRequired(replay.report)).toEqual([defect.check]);
  const notes = replay.report.results.find((r) => r.id === defect.check)?.notes ?? [];
  expect(notes.some((n) => n.startsWith('replayed one sequence'))).toBe(true);
  expect(replay.leftovers).toEqual([]);
}

// Issue 37: Nomad's demo mkfs plugin has two defects (a killed create's retry, a restore a
// crowded mount table fails), and a run that reported one showed them in different runs.
test.concurrent(
  'a plugin with two defects of different classes gets both from one plain dhv check, each with its own recipe and verdict',
  async () => {
    const { plugin, volumesDir } = await fixtureCopy('guard-and-lock');
    const report = await runConformance(plugin, { seed: SEED, volumesDir, skip: ['tasks'] });
    expect(failedRequired(report)).toEqual(['explore.calls-succeed']);
    const found = report.results.find((r) => r.id === 'explore.calls-succeed')!;
    const reason = found.reason ?? '';
    const blocks = reason.split('\n\n');
    expect(blocks).toHaveLength(2);
    const [guard, lock] = blocks as [string, string];
    expect(guard).toContain('\ndefect class guard-leak: ');
    expect(guard).toMatch(/--replay 'create db; delete db; create db'/);
    expect(lock).toContain('\ndefect class killed-create-lock: ');
    expect(lock).toMatch(/--replay 'kill-create db'/);
    expect(lock).toMatch(/\(the plugin's stderr ended: guard-and-lock: \S+\.creating-\S+ is held since [0-9:]+\)/);
    expect(lock).toContain('the agent kills creates at their deadline');
    expect(found.notes).toEqual(
      expect.arrayContaining([
        'finding 1 of 2, guard-leak:',
        "found by the systematic phase's scenario for guard-leak",
        'finding 2 of 2, killed-create-lock:',
        "found by the systematic phase's scenario for killed-create-lock",
      ]),
    );
    expect(await readdir(volumesDir).catch(() => [])).toEqual([]);
  },
  SUITE_TIMEOUT_MS,
);

/** Calibration fixtures that work under a real Nomad agent (test/check-fixtures.test.ts judges their catalogue). */
const WORKS_UNDER_NOMAD = ['good-plugin', 'nomad-guide-style', 'concurrent-same-unsafe', 'loose-answers'];

describe.concurrent('plugins that work under a real Nomad agent pass the explorer', () => {
  for (const name of WORKS_UNDER_NOMAD) {
    test(
      `${name} passes every explore check`,
      async () => {
        const dir = await tempDir(`explore-${name}`);
        scratch.push(dir);
        const volumesDir = join(dir, 'runs');
        const report = await runConformance(join(FIXTURES, name), {
          only: ['explore'],
          seed: SEED,
          // Two sequences: check-fixtures judges their catalogue, and this only that the
          // explorer does not call a plugin that works under Nomad broken.
          runs: 2,
          volumesDir,
        });
        const bad = explored(report).filter((r) => r.status === 'fail' && r.severity === 'required');
        expect(bad.map((r) => `${r.id}: ${r.reason ?? ''}`)).toEqual([]);
        expect(explored(report)).toHaveLength(EXPLORE_CHECKS.length);
        expect(await readdir(volumesDir).catch(() => [])).toEqual([]);
      },
      SUITE_TIMEOUT_MS,
    );
  }
});

describe.concurrent('dhv check on the command line', () => {
  test('--no-explore leaves the explore checks out, and a bad recipe is a usage error', async () => {
    const plugin = join(FIXTURES, 'good-plugin');
    const quick = await dhvCheck(plugin, ['--only', 'discovery', '--no-explore']);
    expect(quick.report.results.some((r) => r.area === 'explore')).toBe(false);
    const off = await dhvCheck(plugin, ['--only', 'explore', '--no-explore']);
    expect(off.report.results).toEqual([]);
    const bad = await runDhv(['check', plugin, '--replay', 'create db; resize db']);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain('"resize db": unknown step');
  });

  test('the old time budget, as a flag or in the environment, is refused naming --runs', async () => {
    const plugin = join(FIXTURES, 'good-plugin');
    for (const [args, env, given] of [
      [['--explore-budget', '30'], {}, '--explore-budget'],
      [[], { DHV_CHECK_EXPLORE_BUDGET: '30' }, 'DHV_CHECK_EXPLORE_BUDGET'],
    ] as const) {
      const run = await runDhv(['check', plugin, '--only', 'discovery', ...args], { env });
      expect(run.exitCode, given).toBe(2);
      expect(run.stderr, given).toContain(`${given} was removed: the explorer runs a number of random sequences`);
      expect(run.stderr, given).toContain('Give --runs N (or set DHV_CHECK_RUNS) instead');
    }
    await expect(runConformance(plugin, { exploreBudgetMs: 30_000 } as object)).rejects.toThrow(
      /exploreBudgetMs was removed: .* give runs/,
    );
  });
});

test.concurrent(
  'the vitest API runs the explorer too, and a failure names its recipe',
  async () => {
    const { plugin, volumesDir } = await fixtureCopy('name-truncation');
    const tests: Array<{ name: string; body: (context: { skip: (note?: string) => void }) => Promise<void> }> = [];
    const closers: Array<() => Promise<void>> = [];
    conformanceTests({
      plugin,
      volumesDir,
      only: ['explore'],
      seed: SEED,
      // The API's wiring is the subject here, not the search: the random sequences alone (the
      // list above judges the systematic phase on this fixture), a few, however long they take.
      // With this seed the second breaks it.
      systematic: false,
      runs: 5,
      describe: (_name, body) => body(),
      test: (name, body) => void tests.push({ name, body }),
      afterAll: (fn) => void closers.push(fn),
    });
    expect(tests.map((t) => t.name.split(':')[0])).toEqual(EXPLORE_CHECKS);
    const distinct = tests.find((t) => t.name.startsWith('explore.volumes-distinct'))!;
    await expect(distinct.body({ skip: () => {} })).rejects.toThrow(/explore\.volumes-distinct failed: .*--replay '/);
    for (const close of closers) await close();
  },
  SUITE_TIMEOUT_MS,
);
