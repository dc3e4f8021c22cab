// `dhv replay` of 1,000 recorded calls of dhv-mkdir against the time the plugin itself
// takes for them. Each round runs the calls once as the agent runs them (the SDK client's
// spawnPlugin, one after another: the plugin's own time, the baseline), writing them as
// `dhv record` writes its log, then replays that log with the whole `dhv replay` process.
// Goal (issue 41): the replay within 1.2× the plugin's own time.
import { randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { spawnPlugin } from '@dhv/sdk/client';

const DHV = fileURLToPath(new URL('../packages/harness/bin/run.js', import.meta.url));
const MKDIR = fileURLToPath(new URL('../packages/plugin-mkdir/dist/dhv-mkdir', import.meta.url));
const CALLS = Number(process.env.DHV_BENCH_REPLAY_CALLS ?? 1000);
const ROUNDS = Number(process.env.DHV_BENCH_REPLAY_ROUNDS ?? 2);

export default async function run(lib) {
  const dir = await lib.makeScratch('replay');
  try {
    const own = [];
    const replayed = [];
    for (let round = 0; round < ROUNDS; round++) {
      const agentDir = join(dir, `agent-${round}`);
      const volumesDir = join(agentDir, 'volumes');
      await mkdir(volumesDir, { recursive: true });
      const { ms, lines } = await runCalls(lib, agentDir, volumesDir);
      own.push(ms);
      const trace = join(agentDir, 'calls.jsonl');
      await writeFile(trace, lines.join(''));
      const started = performance.now();
      const replay = await spawnPlugin(process.execPath, [DHV, 'replay', trace, MKDIR, '--json'], process.env, {
        timeoutMs: 3_600_000,
        maxOutputBytes: 64 * 1024 * 1024,
      });
      replayed.push(performance.now() - started);
      const report = JSON.parse(replay.stdout.toString() || '{}');
      if (replay.exitCode !== 0 || report.same !== CALLS)
        throw new Error(`dhv replay did not find every call the same: ${replay.stdout}${replay.stderr}`.slice(0, 4096));
    }
    return {
      title: 'dhv replay of 1,000 recorded dhv-mkdir calls',
      note:
        `${CALLS} calls of packages/plugin-mkdir/dist/dhv-mkdir (${CALLS / 2} volumes, each created with a 2 MiB capacity and deleted), ` +
        "run one after another as the agent runs them (the SDK client's spawnPlugin): the plugin's own time, the baseline. " +
        'The bench writes them as `dhv record` logs them, then times the whole `dhv replay <log> dhv-mkdir --json` process ' +
        '(node start, the log read, the sandbox made and removed, each call run and compared). ' +
        `${ROUNDS} round(s), each with its own log; DHV_BENCH_REPLAY_CALLS and DHV_BENCH_REPLAY_ROUNDS change them.`,
      rows: [
        { label: `the plugin's own time for ${CALLS} calls`, samplesMs: own, baseline: true },
        { label: `dhv replay of the ${CALLS} recorded calls`, samplesMs: replayed, target: '≤ 1.2×' },
      ],
    };
  } finally {
    await lib.removeScratch(dir);
  }
}

/** The calls run as an agent runs them, timed, and each as the JSON line `dhv record` writes. */
async function runCalls(lib, agentDir, volumesDir) {
  const lines = [];
  let ms = 0;
  for (let i = 0; i < CALLS / 2; i++) {
    const volumeId = randomUUID();
    const request = {
      volumesDir,
      pluginDir: join(agentDir, 'plugins'),
      nodePool: 'default',
      namespace: 'default',
      volumeName: `bench-${i}`,
      volumeId,
      nodeId: '9b6b4a1c-0d51-4d2c-a4a5-8f1b5d1f2e3a',
      capacityMinBytes: 1048576n,
      capacityMaxBytes: 2097152n,
      parameters: null,
      createdPath: join(volumesDir, volumeId),
    };
    for (const operation of ['create', 'delete']) {
      const env = lib.agentEnv(operation, request, MKDIR);
      const start = new Date().toISOString();
      const run = await spawnPlugin(MKDIR, [operation], env, { timeoutMs: 60_000 });
      if (run.exitCode !== 0) throw new Error(`dhv-mkdir ${operation} failed: ${run.stderr}`);
      ms += run.durationMs;
      lines.push(
        `${JSON.stringify({
          plugin: 'dhv-mkdir',
          argv: [operation],
          env,
          exit: run.exitCode,
          stdout: run.stdout.toString(),
          stderr: run.stderr.toString(),
          start,
          duration_ms: run.durationMs,
        })}\n`,
      );
    }
  }
  return { ms, lines };
}
