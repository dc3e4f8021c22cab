// One wave of plugin runs, in a process of its own so that what the runs cost can be
// counted apart from the benchmark: the CPU of every child this process has waited for
// (/proc/self/stat cutime + cstime, which includes what the plugins themselves started,
// such as df) and, when a memory cgroup is given, the peak memory of this process and its
// children together. Plugins are started the way the SDK client starts them
// (spawnPlugin: own process group, piped stdout and stderr, the agent's deadlines) and
// judged the way the agent judges them (interpretRun), so a failed run is counted as one.
//
// Input: the path of a JSON file { mode: 'wave' | 'sequential', memoryCgroup?: dir,
// runs: [{ file, argv, env, operation? }] }. Output on stdout: one JSON document.
import { readFileSync, writeFileSync } from 'node:fs';
import { AGENT_TIMEOUT_MS } from '@dhv/sdk/plugin';
import { DEFAULT_MAX_OUTPUT_BYTES, interpretRun, spawnPlugin } from '@dhv/sdk/client';

const spec = JSON.parse(readFileSync(process.argv[2], 'utf8'));

function childCpuMs() {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 16 and 17 (cutime, cstime), counted from the state field as 3.
  const ticks = Number(fields[13]) + Number(fields[14]);
  return (ticks * 1000) / 100; // USER_HZ is 100 on Linux
}

let memoryBase;
if (spec.memoryCgroup) {
  writeFileSync(`${spec.memoryCgroup}/cgroup.procs`, String(process.pid));
  writeFileSync(`${spec.memoryCgroup}/memory.max_usage_in_bytes`, '0');
  memoryBase = Number(readFileSync(`${spec.memoryCgroup}/memory.usage_in_bytes`, 'utf8'));
}

async function runOne({ file, argv, env, operation }) {
  const started = performance.now();
  const timeoutMs = AGENT_TIMEOUT_MS[operation ?? 'create'];
  const run = await spawnPlugin(file, argv, env, { timeoutMs, maxOutputBytes: DEFAULT_MAX_OUTPUT_BYTES });
  const ms = performance.now() - started;
  let failure;
  if (operation) {
    try {
      interpretRun(operation, run, {
        pluginId: file.split('/').at(-1),
        executable: file,
        volumeId: env.DHV_VOLUME_ID,
        timeoutMs,
      });
    } catch (err) {
      failure = err instanceof Error ? err.message : String(err);
    }
  } else if (run.exitCode !== 0) {
    failure = `${file} ${argv.join(' ')}: exit ${run.exitCode ?? run.signal}: ${run.stderr.toString().trim()}`;
  }
  return { ms, failure };
}

const cpuBefore = childCpuMs();
const started = performance.now();
const results = [];
if (spec.mode === 'sequential') {
  for (const r of spec.runs) results.push(await runOne(r));
} else {
  results.push(...(await Promise.all(spec.runs.map(runOne))));
}
const wallMs = performance.now() - started;
const cpuMs = childCpuMs() - cpuBefore;
const peakBytes = spec.memoryCgroup
  ? Number(readFileSync(`${spec.memoryCgroup}/memory.max_usage_in_bytes`, 'utf8')) - memoryBase
  : undefined;
const failures = results.filter((r) => r.failure).map((r) => r.failure);
process.stdout.write(
  JSON.stringify({
    wallMs,
    cpuMs,
    peakBytes,
    samplesMs: results.map((r) => r.ms),
    failures: failures.slice(0, 5),
    failed: failures.length,
  }),
);
