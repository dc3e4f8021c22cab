// What every benchmark gets: whole-process timing of built executables, the exact
// environment a Nomad agent gives a plugin, and small statistics helpers.
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { buildEnvironment } from '@dhv/sdk/client';

/**
 * Runs `file args` `warmup + runs` times, one after another, and returns the wall-clock
 * milliseconds of each measured run, from spawn to the process having exited and closed
 * its output (what an agent waits for). stdout and stderr are read and discarded, as an
 * agent reads them. A run that exits non-zero or by a signal fails the benchmark, since
 * timing a failure would measure the wrong thing.
 */
export async function timeProcess(file, args = [], { env = {}, cwd, runs = 30, warmup = 3 } = {}) {
  const samples = [];
  for (let i = 0; i < warmup + runs; i++) {
    const ms = await timeOnce(file, args, env, cwd);
    if (i >= warmup) samples.push(ms);
  }
  return samples;
}

function timeOnce(file, args, env, cwd) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(file, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stdout.resume();
    child.stderr.on('data', (chunk) => {
      if (stderr.length < 4096) stderr += chunk;
    });
    child.once('error', (err) => reject(new Error(`could not run ${file}: ${err.message}`)));
    child.once('close', (code, signal) => {
      const ms = performance.now() - started;
      if (code === 0) return resolve(ms);
      reject(new Error(`${file} ${args.join(' ')} failed (${signal ? `signal ${signal}` : `exit status ${code}`}): ${stderr.trim()}`));
    });
  });
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
