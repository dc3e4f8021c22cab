// The CPU of one `dhv agent restart --json` with 10,000 built-in volumes (user + system of
// the whole process and its children, from /usr/bin/time), which moves far less than wall
// time on a shared machine. With DHV_BENCH_RESTART_BASE naming other built dhv trees
// (colon-separated; e.g. a worktree of an older commit after `npm ci && npm run build`),
// their restarts run in the same rounds, taking turns with this tree's, each on a data dir
// seeded through its own store (its `seedVolumes`), so a machine busy with something else
// slows them alike:
//
//   DHV_BENCH_RESTART_BASE=/work/wt/restart-base node bench/run.mjs restart-cpu
import { spawn, spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = fileURLToPath(new URL('..', import.meta.url)).replace(/\/$/, '');
const VOLUMES = 10_000;
const ROUNDS = Number(process.env.DHV_BENCH_RESTART_ROUNDS ?? 9);

export default async function run(lib) {
  const others = lib.otherTrees('DHV_BENCH_RESTART_BASE');
  const trees = [HERE, ...others];
  const dir = await lib.makeScratch('restart-cpu');
  try {
    const dataDirs = trees.map((tree, i) => seed(tree, join(dir, `tree-${i}`)));
    const timesFile = join(dir, 'times');
    // A warm-up restart each: it reads the files, makes the folders and writes the index.
    for (const [i, tree] of trees.entries()) await restart(tree, dataDirs[i], timesFile);
    const samples = trees.map(() => []);
    for (let round = 0; round < ROUNDS; round++) {
      // The order turns each round: no tree always runs right after another.
      for (let k = 0; k < trees.length; k++) {
        const i = (k + round) % trees.length;
        samples[i].push(await restart(trees[i], dataDirs[i], timesFile));
      }
    }
    return {
      title: `dhv agent restart: CPU of a restart of ${VOLUMES.toLocaleString('en')} built-in volumes${others.length ? ', against other builds' : ''}`,
      note:
        `CPU time (user + system, children included, from /usr/bin/time; figures in ms) of whole \`dhv agent restart --json\` processes on a data dir of ${VOLUMES} built-in mkdir volumes ` +
        'seeded through the store of the tree that runs it, after one warm-up restart (which writes the state index). ' +
        `${ROUNDS} rounds; in each, every tree's restart runs once, the order turned each round. ` +
        'Trees other than this one come from DHV_BENCH_RESTART_BASE (built worktrees of other commits), and are named by their commit.',
      // The first other tree, when there is one, is the baseline the others are compared with.
      rows: trees.map((tree, i) => ({
        label: `${i === 0 ? 'this tree' : 'other tree'} (${lib.commitOf(tree)}): CPU of dhv agent restart --json`,
        samplesMs: samples[i],
        ...(i === 1 ? { baseline: true } : {}),
      })),
    };
  } finally {
    await lib.removeScratch(dir);
  }
}

/** Seeds `dataDir` with `VOLUMES` built-in volumes through `tree`'s own store; returns `dataDir`. */
function seed(tree, dataDir) {
  // seedVolumes moved from @dhv/harness to @dhv/harness/testing after 9670b4d.
  const script = `
    const harness = await import('@dhv/harness');
    const testing = await import('@dhv/harness/testing').catch(() => ({}));
    const seedVolumes = testing.seedVolumes ?? harness.seedVolumes;
    const { randomUUID } = await import('node:crypto');
    const { mkdir } = await import('node:fs/promises');
    const config = await harness.loadAgentConfig({ dataDir: ${JSON.stringify(dataDir)} });
    await mkdir(config.volumesDir, { recursive: true });
    const volumes = Array.from({ length: ${VOLUMES} }, (_, i) => ({ id: randomUUID(), name: 'bench-' + i, pluginId: 'mkdir' }));
    await seedVolumes(${JSON.stringify(dataDir)}, volumes, { volumesDir: config.volumesDir });`;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: join(tree, 'bench') });
  if (run.status !== 0) throw new Error(`seeding through ${tree} failed: ${run.stderr}`);
  return dataDir;
}

/** One `dhv agent restart --json` of `tree` on `dataDir`: its CPU in ms (user + system, children included). */
function restart(tree, dataDir, timesFile) {
  return new Promise((done, fail) => {
    const dhv = join(tree, 'packages/harness/bin/run.js');
    const child = spawn(
      '/usr/bin/time',
      ['-f', '%U %S', '-o', timesFile, process.execPath, dhv, 'agent', 'restart', '--json', '--data-dir', dataDir],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stdout.resume();
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', fail);
    child.on('close', async (code) => {
      if (code !== 0) return fail(new Error(`${dhv} agent restart failed (${code}): ${stderr.slice(0, 2000)}`));
      const [user, system] = (await readFile(timesFile, 'utf8')).trim().split(/\s+/).map(Number);
      done((user + system) * 1000);
    });
  });
}
