// What every benchmark gets: whole-process timing of built executables, the exact
// environment a Nomad agent gives a plugin, and small statistics helpers.
import { execFile, spawnSync } from 'node:child_process';
import { mkdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { buildEnvironment, DEFAULT_MAX_OUTPUT_BYTES, spawnPlugin } from '@dhv/sdk/client';
import { makeScratch, removeScratch } from './scratch.mjs';

export { makeScratch, removeScratch };

/**
 * Runs `file args` `warmup + runs` times, one after another, and returns the wall-clock
 * milliseconds of each measured run, from spawn to the process having exited and closed
 * its output (what an agent waits for). Plugins are started as the SDK client starts
 * them (spawnPlugin: its own process group, stdout and stderr read through pipes, the
 * agent's output caps, unless `maxOutputBytes` says otherwise: output beyond it kills the
 * run). A run that exits non-zero or by a signal fails the benchmark,
 * since timing a failure would measure the wrong thing.
 */
export async function timeProcess(
  file,
  args = [],
  { env = {}, cwd, runs = 30, warmup = 3, maxOutputBytes = DEFAULT_MAX_OUTPUT_BYTES } = {},
) {
  const samples = [];
  for (let i = 0; i < warmup + runs; i++) {
    const ms = await timeOnce(file, args, env, cwd, maxOutputBytes);
    if (i >= warmup) samples.push(ms);
  }
  return samples;
}

async function timeOnce(file, args, env, cwd, maxOutputBytes) {
  const started = performance.now();
  const run = await spawnPlugin(file, args, env, { timeoutMs: 600_000, maxOutputBytes, cwd });
  const ms = performance.now() - started;
  if (run.spawnError) throw new Error(`could not run ${file}: ${run.spawnError.message}`);
  if (run.exitCode === 0) return ms;
  const why = run.signal ? `signal ${run.signal}` : `exit status ${run.exitCode}`;
  throw new Error(`${file} ${args.join(' ')} failed (${why}): ${run.stderr.toString().slice(0, 4096).trim()}`);
}

const WAVE = fileURLToPath(new URL('./wave.mjs', import.meta.url));

/**
 * Runs every entry of `runs` ({ file, argv, env, operation? }) in a process of its own
 * (bench/wave.mjs), all at once (`mode: 'wave'`, as Nomad starts restores) or one after
 * another (`'sequential'`), and returns { wallMs, cpuMs, peakBytes, samplesMs, failed }:
 * wall time until the last run answered, the CPU time of all the runs together (what
 * they and their own children used), and, where a memory cgroup can be made, the peak
 * memory of the runs and the runner together (undefined otherwise).
 */
export async function runWave(runs, { mode = 'wave' } = {}) {
  const dir = await makeScratch('wave');
  const cgroup = await makeMemoryCgroup();
  try {
    const specFile = join(dir, 'spec.json');
    await writeFile(specFile, JSON.stringify({ mode, runs, memoryCgroup: cgroup }));
    const result = await new Promise((resolve, reject) => {
      execFile(process.execPath, [WAVE, specFile], { maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) =>
        err ? reject(new Error(`the wave runner failed: ${err.message}\n${stderr}`)) : resolve(JSON.parse(stdout)),
      );
    });
    return result;
  } finally {
    if (cgroup) await rmdir(cgroup).catch(() => {});
    await removeScratch(dir);
  }
}

/** A fresh memory cgroup below this process's own, or undefined when none can be made. */
async function makeMemoryCgroup() {
  try {
    const lines = (await readFile('/proc/self/cgroup', 'utf8')).split('\n');
    const v1 = lines.find((l) => l.split(':')[1]?.split(',').includes('memory'));
    // Only cgroup v1's memory.max_usage_in_bytes can be reset per wave; on v2 peak memory is not measured.
    if (!v1) return undefined;
    const dir = join(
      `/sys/fs/cgroup/memory${v1.split(':')[2]}`,
      `dhv-bench-${process.pid}-${Math.random().toString(36).slice(2, 8)}`,
    );
    await mkdir(dir);
    return dir;
  } catch {
    return undefined;
  }
}

/**
 * The environment a Nomad agent gives a plugin for `operation`, and nothing else (no
 * PATH, no HOME). `executable` only supplies DHV_PLUGIN_DIR's default for create and
 * delete; fingerprint's environment is DHV_OPERATION alone.
 */
export function agentEnv(operation, request = {}, executable = '/opt/nomad/host_volume_plugins/plugin') {
  return buildEnvironment(operation, request, executable);
}

function sorted(samples) {
  if (samples.length === 0) throw new Error('no samples');
  return [...samples].sort((a, b) => a - b);
}

export function median(samples) {
  const s = sorted(samples);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

export function min(samples) {
  return sorted(samples)[0];
}

export function max(samples) {
  return sorted(samples).at(-1);
}

/** The built dhv trees of other commits a comparing benchmark is given: `variable`, colon-separated. */
export function otherTrees(variable) {
  return (process.env[variable] ?? '').split(':').filter(Boolean);
}

/** A tree's commit, short, or its path when it is no git checkout (a `git archive` of one). */
export function commitOf(tree) {
  const head = spawnSync('git', ['-C', tree, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' });
  return head.status === 0 ? head.stdout.trim() : tree;
}

/**
 * The source of a `--require` hook that writes, at the process's exit, its own CPU (user +
 * system, in ms, its threads included and its children not) as `{"cpuMs": ...}` to the file
 * DHV_BENCH_USAGE_FILE names. `prelude` runs first; `fields` names its variables the
 * document carries too.
 */
export function ownCpuHook({ prelude = '', fields = [] } = {}) {
  return `${prelude}
process.on('exit', () => {
  const { userCPUTime, systemCPUTime } = process.resourceUsage();
  const usage = { cpuMs: (userCPUTime + systemCPUTime) / 1000, ${fields.join(', ')} };
  require('node:fs').writeFileSync(process.env.DHV_BENCH_USAGE_FILE, JSON.stringify(usage));
});
`;
}
