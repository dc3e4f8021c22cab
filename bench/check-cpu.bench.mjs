// The CPU of dhv's own process per plugin call in a `dhv check` (user + system of the dhv
// node process alone, its threads included, not the plugins': Node's process.resourceUsage
// at its exit, from a --require file), which moves far less than wall time on a shared
// machine. Two runs: the bash fixture stateful/slot-reuse (its calls cost a few
// milliseconds, so dhv's share shows) with the explorer at one seed, and dhv-mkdir's
// catalogue. With DHV_BENCH_CHECK_CPU_BASE naming other built dhv trees (colon-separated;
// e.g. an archive of an older commit after `npm ci && npm run build`), their checks run in
// the same rounds, taking turns with this tree's:
//
//   DHV_BENCH_CHECK_CPU_BASE=/tmp/base node bench/run.mjs check-cpu
import { spawn } from 'node:child_process';
import { cp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = fileURLToPath(new URL('..', import.meta.url)).replace(/\/$/, '');
const ROUNDS = Number(process.env.DHV_BENCH_CHECK_CPU_ROUNDS ?? 3);
const OPERATIONS = new Set(['create', 'delete', 'fingerprint']);

/** Counts the plugin calls the dhv process starts (bench/lib.mjs's hook writes them with its CPU). */
const COUNT_CALLS = `
const childProcess = require('node:child_process');
let calls = 0;
const spawnOne = childProcess.ChildProcess.prototype.spawn;
childProcess.ChildProcess.prototype.spawn = function (options) {
  if (${JSON.stringify([...OPERATIONS])}.includes(options?.args?.[1])) calls++;
  return spawnOne.call(this, options);
};`;

const CHECKS = [
  {
    label: 'stateful/slot-reuse (bash) --seed 24 --skip tasks',
    fixture: 'packages/harness/fixtures/stateful/slot-reuse',
    flags: ['--seed', '24', '--skip', 'tasks'],
  },
  { label: 'dhv-mkdir --no-explore', plugin: 'packages/plugin-mkdir/dist/dhv-mkdir', flags: ['--no-explore'] },
];

export default async function run(lib) {
  const others = lib.otherTrees('DHV_BENCH_CHECK_CPU_BASE');
  const trees = [HERE, ...others];
  const dir = await lib.makeScratch('check-cpu');
  try {
    const hook = join(dir, 'usage.cjs');
    await writeFile(hook, lib.ownCpuHook({ prelude: COUNT_CALLS, fields: ['calls'] }));
    const rows = [];
    for (const check of CHECKS) {
      const samples = trees.map(() => []);
      const calls = trees.map(() => []);
      for (let round = 0; round < ROUNDS; round++) {
        // The order turns each round: no tree always runs right after another.
        for (let k = 0; k < trees.length; k++) {
          const i = (k + round) % trees.length;
          const usage = await checkOnce(trees[i], check, dir, hook);
          samples[i].push(usage.cpuMs / usage.calls);
          calls[i].push(usage.calls);
        }
      }
      const labelOf = (i) =>
        `${i === 0 ? 'this tree' : 'other tree'} (${lib.commitOf(trees[i])}): ${check.label}, dhv's CPU per plugin call`;
      for (const i of trees.keys())
        rows.push({
          label: labelOf(i),
          samplesMs: samples[i],
          extra: { calls: calls[i] },
          // Each check's rows are compared with the first other tree's row of that check.
          ...(i !== 1 && trees.length > 1 ? { vs: labelOf(1) } : {}),
        });
    }
    return {
      title: "dhv check: dhv's own CPU per plugin call",
      note:
        "CPU time (user + system; figures in ms) of the dhv process alone, its threads included and the plugins' processes not, " +
        'divided by the plugin calls it started (spawns whose argv[1] is an operation), for whole `dhv check` runs: the bash fixture ' +
        'stateful/slot-reuse, explorer included at one seed (a fresh copy each run), and the reference plugin dhv-mkdir with --no-explore. ' +
        `${ROUNDS} rounds; in each, every tree's check runs once, the order turned each round. Trees other than this one come from ` +
        'DHV_BENCH_CHECK_CPU_BASE (built trees of other commits), named by their commit.',
      columns: ['calls'],
      rows,
    };
  } finally {
    await lib.removeScratch(dir);
  }
}

/** One `dhv check` of `tree`: dhv's own CPU in ms and the plugin calls it started. Its verdict is not judged. */
async function checkOnce(tree, check, dir, hook) {
  const work = join(dir, 'run');
  await rm(work, { recursive: true, force: true });
  let plugin = join(tree, check.plugin ?? '');
  if (check.fixture) {
    plugin = join(work, 'plugin');
    await cp(join(tree, check.fixture), plugin, { recursive: true });
  }
  const usageFile = join(dir, 'usage.json');
  const dhv = join(tree, 'packages/harness/bin/run.js');
  const args = ['--require', hook, dhv, 'check', plugin, ...check.flags, '--volumes-dir', join(work, 'volumes')];
  const env = { ...process.env, DHV_BENCH_USAGE_FILE: usageFile };
  delete env.NODE_EXTRA_CA_CERTS; // read at every node start: not dhv's cost
  await new Promise((done, fail) => {
    const child = spawn(process.execPath, args, { env, stdio: 'ignore' });
    child.on('error', fail);
    child.on('close', done);
  });
  return JSON.parse(await readFile(usageFile, 'utf8'));
}
