// Where one plugin run spends its time: dhv-mkdir, bundled unminified, making a new volume
// (the create that misses its target) under V8's CPU profiler, with the agent's exact
// environment. Each sample is put under the innermost function of the plugin bundle on
// its stack (the SDK and the plugin are one bundle), or under what Node was doing when no
// bundle code was on the stack. The whole run's wall time, from spawn to exit, is the
// baseline; what the profile does not cover (exec, Node's bootstrap before the profiler
// starts, exit) is its own row.
import { randomUUID } from 'node:crypto';
import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { bundlePlugin } from '@dhv/sdk/build';

const ENTRY = fileURLToPath(new URL('../packages/plugin-mkdir/src/plugin.ts', import.meta.url));
const RUNS = 20;
const WARMUP = 3;
const TOP = 9;

export default async function run(lib) {
  const dir = await lib.makeScratch('profile');
  try {
    // Bundled as `npm run build` bundles it, but with its functions' names kept.
    const { outfile: plugin } = await bundlePlugin({ entry: ENTRY, outfile: join(dir, 'dhv-mkdir'), minify: false });
    const perRun = [];
    for (let i = 0; i < WARMUP + RUNS; i++) {
      const profileDir = join(dir, `profile-${i}`);
      const env = lib.agentEnv(
        'create',
        {
          volumesDir: join(dir, 'volumes'),
          volumeId: randomUUID(),
          volumeName: 'bench',
          nodeId: 'bench-node',
          parameters: { mode: '0750' },
        },
        plugin,
      );
      const started = performance.now();
      await new Promise((resolve, reject) =>
        execFile(
          process.execPath,
          ['--cpu-prof', '--cpu-prof-dir', profileDir, '--cpu-prof-interval', '100', plugin, 'create'],
          { env },
          (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stdout}${stderr}`)) : resolve()),
        ),
      );
      const wallMs = performance.now() - started;
      const [file] = await readdir(profileDir);
      if (i >= WARMUP)
        perRun.push({ wallMs, ...bucketsOf(JSON.parse(await readFile(join(profileDir, file), 'utf8'))) });
    }

    const total = new Map();
    for (const r of perRun) for (const [name, ms] of r.buckets) total.set(name, (total.get(name) ?? 0) + ms);
    const top = [...total.entries()].sort((a, b) => b[1] - a[1]).map(([name]) => name);
    const shown = top.slice(0, TOP);
    const msOf = (r, names) => names.reduce((sum, name) => sum + (r.buckets.get(name) ?? 0), 0);
    const rows = [
      { label: 'whole run: spawn to exit (baseline)', baseline: true, samplesMs: perRun.map((r) => r.wallMs) },
      {
        label: 'outside the profile: exec, Node bootstrap before the profiler, exit',
        samplesMs: perRun.map((r) => Math.max(0, r.wallMs - r.profiledMs)),
      },
      ...shown.map((name) => ({ label: name, samplesMs: perRun.map((r) => msOf(r, [name])) })),
      { label: 'everything else', samplesMs: perRun.map((r) => msOf(r, top.slice(TOP))) },
    ];
    return {
      title: 'Where a new dhv-mkdir volume spends its time: a CPU profile',
      note:
        `${RUNS} runs (after ${WARMUP} warm-up runs) of dhv-mkdir, bundled as the build bundles it but not minified (so functions keep their names), making a new volume (mode 0750) under ` +
        '`node --cpu-prof --cpu-prof-interval 100`, with the agent environment; each row is the median per run. ' +
        'A sample counts under the innermost function of the plugin bundle on its stack (`fn()`), or, with no ' +
        "bundle code on the stack, under what Node was doing: `(idle)` is waiting on the kernel (flock(1)'s " +
        'process, file system calls), `(program)` is V8 and Node outside JavaScript (compiling, bootstrap), ' +
        '`node:` rows are Node internals run from the event loop. The profiler itself slows a run a little.',
      rows,
    };
  } finally {
    await lib.removeScratch(dir);
  }
}

/** Milliseconds per bucket of one .cpuprofile, and how long it covered. */
function bucketsOf(profile) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n.id);
  const bundle = profile.nodes.find((n) => n.callFrame.url.endsWith('/dhv-mkdir'))?.callFrame.url;
  const bucketOfNode = new Map();
  const bucketOf = (id) => {
    if (bucketOfNode.has(id)) return bucketOfNode.get(id);
    let name;
    for (let at = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at).callFrame;
      if (frame.url === bundle) {
        name = `${frame.functionName || '(bundle top level)'}()`;
        break;
      }
    }
    if (!name) {
      const leaf = byId.get(id).callFrame;
      name = leaf.url ? leaf.url.replace(/^node:internal\//, 'node:') : leaf.functionName;
    }
    bucketOfNode.set(id, name);
    return name;
  };
  const buckets = new Map();
  profile.samples.forEach((id, i) => {
    const name = bucketOf(id);
    buckets.set(name, (buckets.get(name) ?? 0) + profile.timeDeltas[i] / 1000);
  });
  return { buckets, profiledMs: (profile.endTime - profile.startTime) / 1000 };
}
