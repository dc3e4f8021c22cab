// How long `dhv agent restart` takes to restore a node full of volumes: 500 volumes on
// the reference dhv-mkdir plugin (one process per volume) and 10,000 on the built-in
// mkdir (in process), against the ideal for the plugin case measured in the same run:
// 500 × one dhv-mkdir restore create ÷ cores, i.e. every core busy with plugin runs and
// nothing else. Targets: within 1.3× of that ideal; 10,000 built-in volumes under 2 s and
// within 2.5× of the floor measured in the same run (bench/restore-floor.mjs: one plain Node
// process doing only mkdir -p, chown and one stat per volume, as Nomad's built-in restore).
import { randomUUID } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { copyFile, mkdir } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent, loadAgentConfig } from '@dhv/harness';
import { seedVolumes } from '@dhv/harness/testing';

const DHV = fileURLToPath(new URL('../packages/harness/bin/run.js', import.meta.url));
const FLOOR = fileURLToPath(new URL('./restore-floor.mjs', import.meta.url));
const PLUGIN = fileURLToPath(new URL('../packages/plugin-mkdir/dist/dhv-mkdir', import.meta.url));
const PLUGIN_VOLUMES = 500;
const BUILTIN_VOLUMES = 10_000;
const RUNS = 3;
/**
 * The built-in restart and its floor take half a second each: each round runs them this
 * many times, one after the other, so their medians rest on more runs than the plugin rows'.
 */
const BUILTIN_PAIRS_PER_ROUND = 3;
const FLOOR_LABEL = `floor: one Node process, mkdir -p + chown + stat × ${BUILTIN_VOLUMES.toLocaleString('en')}`;

export default async function run(lib) {
  const cores = availableParallelism();
  const dir = await lib.makeScratch('restart');
  try {
    const pluginAgent = await seed(join(dir, 'plugin'), 'dhv-mkdir', PLUGIN_VOLUMES);
    const builtinAgent = await seed(join(dir, 'builtin'), 'mkdir', BUILTIN_VOLUMES);
    const restart = async (config) =>
      (
        await lib.timeProcess(process.execPath, [DHV, 'agent', 'restart', '--json', '--data-dir', config.dataDir], {
          env: process.env,
          runs: 1,
          warmup: 0,
          // --json lists every restored volume: 10,000 of them are more than a plugin's output cap.
          maxOutputBytes: 256 * 1024 * 1024,
        })
      )[0];

    // The restore call the agent makes for each volume: create of a volume that exists.
    const existing = randomUUID();
    const request = {
      volumesDir: pluginAgent.volumesDir,
      pluginDir: pluginAgent.pluginDir,
      volumeId: existing,
      volumeName: 'bench',
      nodeId: 'bench-node',
    };
    const oneCreate = () =>
      lib.timeProcess(join(pluginAgent.pluginDir, 'dhv-mkdir'), ['create'], {
        env: lib.agentEnv('create', request, PLUGIN),
        runs: 9,
        warmup: 1,
      });

    // Rounds interleave every row, so a machine busy with something else slows them alike;
    // the first round (which also makes the volumes' directories) is a warm-up.
    const rows = { ideal: [], pluginRestart: [], bounded: [], unbounded: [], builtinRestart: [], floor: [] };
    let unboundedFailures = 0;
    for (let round = 0; round <= RUNS; round++) {
      const sample = {
        ideal: (lib.median(await oneCreate()) * PLUGIN_VOLUMES) / cores,
        pluginRestart: await restart(pluginAgent),
        ...(await builtinPairs(restart, builtinAgent)),
        bounded: await inProcessRestart(pluginAgent, undefined),
        // Nomad starts every restore at once; the same restore unbounded, in process, for comparison.
        unbounded: await inProcessRestart(pluginAgent, PLUGIN_VOLUMES),
      };
      if (sample.bounded.failures > 0) throw new Error(`the bounded restore failed ${sample.bounded.failures} volumes`);
      if (round === 0) continue;
      unboundedFailures += sample.unbounded.failures;
      rows.ideal.push(sample.ideal);
      rows.pluginRestart.push(sample.pluginRestart);
      rows.builtinRestart.push(...sample.builtinRestart);
      rows.floor.push(...sample.floor);
      rows.bounded.push(sample.bounded.ms);
      rows.unbounded.push(sample.unbounded.ms);
    }

    return {
      title: `dhv agent restart: restoring ${PLUGIN_VOLUMES} dhv-mkdir and ${BUILTIN_VOLUMES.toLocaleString('en')} built-in volumes`,
      note:
        `Whole \`dhv agent restart --json\` processes (node start, client state load, plugin fingerprint, restore, node facts written) on data dirs seeded with ` +
        `${PLUGIN_VOLUMES} volumes on packages/plugin-mkdir/dist/dhv-mkdir and ${BUILTIN_VOLUMES} on the built-in mkdir. ` +
        `The baseline is the ideal for the plugin case: per round, the median of 9 dhv-mkdir restore creates (an existing volume, agent environment) × ${PLUGIN_VOLUMES} ÷ ${cores} cores. ` +
        `Rows are interleaved round by round after a warm-up round; the built-in restart and its floor run ${BUILTIN_PAIRS_PER_ROUND} times each per round, one after the other. ` +
        'The in-process rows run Agent.restart() without the CLI, bounded (the default pool, twice the cores) and unbounded (every restore at once, as Nomad does).',
      rows: [
        {
          label: `ideal: ${PLUGIN_VOLUMES} × one dhv-mkdir create ÷ ${cores} cores`,
          samplesMs: rows.ideal,
          baseline: true,
        },
        {
          label: `dhv agent restart, ${PLUGIN_VOLUMES} dhv-mkdir volumes`,
          samplesMs: rows.pluginRestart,
          target: '≤ 1.3× ideal',
        },
        { label: `Agent.restart() in process, ${PLUGIN_VOLUMES} dhv-mkdir, bounded pool`, samplesMs: rows.bounded },
        {
          label: `Agent.restart() in process, ${PLUGIN_VOLUMES} dhv-mkdir, unbounded (Nomad)${unboundedFailures > 0 ? `: ${unboundedFailures} restores failed` : ''}`,
          samplesMs: rows.unbounded,
        },
        {
          label: `dhv agent restart, ${BUILTIN_VOLUMES.toLocaleString('en')} built-in mkdir volumes`,
          samplesMs: rows.builtinRestart,
          target: '< 2000 ms and ≤ 2.5× floor',
          vs: FLOOR_LABEL,
        },
        {
          label: FLOOR_LABEL,
          samplesMs: rows.floor,
        },
      ],
    };
  } finally {
    await lib.removeScratch(dir);
  }
}

/**
 * A data dir whose client state holds `count` created volumes on `pluginId`, seeded through
 * the state store (`seedVolumes`), so it follows the store's format; the first restore (a
 * warm-up run) makes their directories.
 */
async function seed(dataDir, pluginId, count) {
  const config = await loadAgentConfig({ dataDir });
  await mkdir(config.pluginDir, { recursive: true });
  await mkdir(config.volumesDir, { recursive: true });
  if (pluginId !== 'mkdir') await copyFile(PLUGIN, join(config.pluginDir, pluginId));
  const volumes = Array.from({ length: count }, (_, i) => ({ id: randomUUID(), name: `bench-${i}`, pluginId }));
  await seedVolumes(dataDir, volumes, { volumesDir: config.volumesDir });
  config.ids = volumes.map((v) => v.id);
  return config;
}

/** `BUILTIN_PAIRS_PER_ROUND` restarts of the built-in volumes, each followed by a floor run. */
async function builtinPairs(restart, config) {
  const pair = { builtinRestart: [], floor: [] };
  for (let i = 0; i < BUILTIN_PAIRS_PER_ROUND; i++) {
    pair.builtinRestart.push(await restart(config));
    pair.floor.push(floor(config));
  }
  return pair;
}

/** The whole floor process's wall time, over the same volumes the restart restores. */
function floor(config) {
  const started = performance.now();
  const run = spawnSync(process.execPath, [FLOOR, config.volumesDir], { input: config.ids.join('\n') });
  if (run.status !== 0) throw new Error(`restore-floor failed: ${run.stderr}`);
  return performance.now() - started;
}

async function inProcessRestart(config, concurrency) {
  const agent = await Agent.open(config, concurrency ? { restoreConcurrency: concurrency } : {});
  const started = performance.now();
  const report = await agent.restart();
  const ms = performance.now() - started;
  await agent.shutdown();
  // 500 plugin processes at once can starve each other past the SDK's output deadlines.
  return { ms, failures: report.failed.length };
}
