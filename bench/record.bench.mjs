// What `dhv record`'s recorder adds to each plugin call: dhv-mkdir's fingerprint and
// create run as the agent runs them, directly and through the recorder (which starts
// node, runs the plugin, passes its output on and appends the log line).
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { copyFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';

const DHV = fileURLToPath(new URL('../packages/harness/bin/run.js', import.meta.url));
const MKDIR = fileURLToPath(new URL('../packages/plugin-mkdir/dist/dhv-mkdir', import.meta.url));
const ROUNDS = 20;

export default async function run(lib) {
  const dir = await lib.makeScratch('record');
  try {
    const plugins = join(dir, 'plugins');
    const volumesDir = join(dir, 'volumes');
    await mkdir(plugins);
    await mkdir(volumesDir);
    const recorded = join(plugins, 'dhv-mkdir');
    await copyFile(MKDIR, recorded);
    await promisify(execFile)(process.execPath, [DHV, 'record', recorded]);
    const direct = join(plugins, '.dhv-record', 'dhv-mkdir', 'dhv-mkdir');
    const createEnv = (plugin) =>
      lib.agentEnv(
        'create',
        {
          volumesDir,
          pluginDir: plugins,
          nodePool: 'default',
          namespace: 'default',
          volumeName: 'bench',
          volumeId: randomUUID(),
          nodeId: '9b6b4a1c-0d51-4d2c-a4a5-8f1b5d1f2e3a',
          capacityMinBytes: 0n,
          capacityMaxBytes: 2097152n,
          parameters: null,
        },
        plugin,
      );
    const rows = [
      { label: 'dhv-mkdir fingerprint', file: direct, op: 'fingerprint', baseline: true },
      { label: 'dhv-mkdir fingerprint, through the recorder', file: recorded, op: 'fingerprint' },
      { label: 'dhv-mkdir create', file: direct, op: 'create' },
      { label: 'dhv-mkdir create, through the recorder', file: recorded, op: 'create', vs: 'dhv-mkdir create' },
    ].map((row) => ({ ...row, samplesMs: [] }));
    for (let round = 0; round <= ROUNDS; round++) {
      for (const row of rows) {
        const env = row.op === 'fingerprint' ? lib.agentEnv('fingerprint', {}, row.file) : createEnv(row.file);
        const [ms] = await lib.timeProcess(row.file, [row.op], { env, runs: 1, warmup: 0 });
        if (round > 0) row.samplesMs.push(ms); // round 0 warms up
      }
    }
    return {
      title: "dhv record: what the recorder adds to a plugin's call",
      note:
        'packages/plugin-mkdir/dist/dhv-mkdir run as the agent runs it (argv, the agent environment, the SDK client’s spawnPlugin), ' +
        'directly (the file kept in .dhv-record/) and through the recorder `dhv record` put at its path ' +
        '(`#!<node>`, the plugin run through setpriv --pdeathsig where the host has it, output passed on, one log line appended). ' +
        `Rows interleaved, ${ROUNDS} rounds after a warm-up round; each create makes a new volume with a 2 MiB capacity. ` +
        'The recorder’s cost is one node start per call; the agent gives a fingerprint 1 s.',
      rows: rows.map(({ label, samplesMs, baseline, vs }) => ({
        label,
        samplesMs,
        ...(baseline ? { baseline } : {}),
        ...(vs ? { vs } : {}),
      })),
    };
  } finally {
    await lib.removeScratch(dir);
  }
}
