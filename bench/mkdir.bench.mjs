// dhv-mkdir latency as the agent sees it: the built plugin (packages/plugin-mkdir/dist/
// dhv-mkdir, from `npm run build`) run with the agent's exact environment (no PATH, no
// HOME), against `node -e 0` with the same environment in the same run. Targets:
// fingerprint within 1.5x, create within 2x of `node -e 0`.
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findTool } from '@dhv/sdk/plugin';

const PLUGIN = fileURLToPath(new URL('../packages/plugin-mkdir/dist/dhv-mkdir', import.meta.url));
const RUNS = 30;
const WARMUP = 3;

export default async function run(lib) {
  const dir = await mkdtemp(join(tmpdir(), 'dhv-bench-mkdir-'));
  try {
    const volumesDir = join(dir, 'volumes');
    const request = (volumeId) => ({ volumesDir, volumeId, volumeName: 'bench', nodeId: 'bench-node', parameters: { mode: '0750' } });
    const createEnv = (volumeId) => lib.agentEnv('create', request(volumeId), PLUGIN);
    const opts = { env: lib.agentEnv('fingerprint', {}), runs: RUNS, warmup: WARMUP };

    // A new volume every run: each sample is one whole create (mkdir, chmod, df).
    const createNew = [];
    for (let i = 0; i < WARMUP + RUNS; i++) {
      const [ms] = await lib.timeProcess(PLUGIN, ['create'], { env: createEnv(randomUUID()), runs: 1, warmup: 0 });
      if (i >= WARMUP) createNew.push(ms);
    }
    // The same volume again: the restore call the agent makes after every restart.
    const existing = randomUUID();
    const restore = await lib.timeProcess(PLUGIN, ['create'], { env: createEnv(existing), runs: RUNS, warmup: WARMUP });
    const deleteMissing = await lib.timeProcess(PLUGIN, ['delete'], {
      env: lib.agentEnv('delete', { ...request(randomUUID()), parameters: null }, PLUGIN),
      runs: RUNS,
      warmup: WARMUP,
    });
    // What the free-space query spawns: check-disk-space runs `df -Pk -- <path>`.
    const df = await lib.timeProcess(findTool('df', 'coreutils'), ['-Pk', '--', volumesDir], { env: {}, runs: RUNS, warmup: WARMUP });

    return {
      title: 'dhv-mkdir under the agent environment',
      note:
        'The bundled packages/plugin-mkdir/dist/dhv-mkdir run as `<plugin> <operation>` with exactly the agent\'s ' +
        'environment (DHV_* only, no PATH/HOME); `node -e 0` with the same environment is the baseline. ' +
        '"create, new volume" makes a fresh volume each run (mode 0750, free space measured); "create, existing" is ' +
        'the restore call after an agent restart. The `df` row is the process check-disk-space spawns, inside every create.',
      rows: [
        { label: 'node -e 0', samplesMs: await lib.timeProcess(process.execPath, ['-e', '0'], opts), baseline: true },
        { label: 'dhv-mkdir fingerprint', samplesMs: await lib.timeProcess(PLUGIN, ['fingerprint'], opts), target: '≤ 1.5× node -e 0' },
        { label: 'dhv-mkdir create, new volume', samplesMs: createNew, target: '≤ 2× node -e 0' },
        { label: 'dhv-mkdir create, existing (restore)', samplesMs: restore, target: '≤ 2× node -e 0' },
        { label: 'dhv-mkdir delete, missing volume', samplesMs: deleteMissing },
        { label: 'df -Pk (spawned by check-disk-space)', samplesMs: df },
      ],
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
