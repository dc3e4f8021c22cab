// dhv-mkdir latency as the agent sees it: the built plugin (packages/plugin-mkdir/dist/
// dhv-mkdir, from `npm run build`) run with the agent's exact environment (no PATH, no
// HOME), against `node -e 0` with the same environment in the same run. Targets:
// fingerprint within 1.5x, create within 2x of `node -e 0`.
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundlePlugin } from '@dhv/sdk/build';
import { findTool } from '@dhv/sdk/plugin';

const PLUGIN = fileURLToPath(new URL('../packages/plugin-mkdir/dist/dhv-mkdir', import.meta.url));
const ROUNDS = 40;
const WARMUP = 4;

export default async function run(lib) {
  const dir = await mkdtemp(join(tmpdir(), 'dhv-bench-mkdir-'));
  try {
    const volumesDir = join(dir, 'volumes');
    const request = (volumeId) => ({ volumesDir, volumeId, volumeName: 'bench', nodeId: 'bench-node', parameters: { mode: '0750' } });
    const once = async (file, args, env) => (await lib.timeProcess(file, args, { env, runs: 1, warmup: 0 }))[0];
    const fingerprintEnv = lib.agentEnv('fingerprint', {});
    const existing = randomUUID();
    const df = findTool('df', 'coreutils');
    const minimal = await bundleMinimalPlugin(dir);

    // One of each per round, so a machine busy with something else slows every row alike.
    const rows = [
      { label: 'node -e 0', baseline: true, measure: () => once(process.execPath, ['-e', '0'], fingerprintEnv) },
      { label: 'dhv-mkdir fingerprint', target: '≤ 1.5× node -e 0', measure: () => once(PLUGIN, ['fingerprint'], fingerprintEnv) },
      // A fresh volume every run: one whole create (lock, mkdir, chmod, df).
      { label: 'dhv-mkdir create, new volume', target: '≤ 2× node -e 0', measure: () => once(PLUGIN, ['create'], lib.agentEnv('create', request(randomUUID()), PLUGIN)) },
      // The restore call the agent makes for every volume after each restart.
      { label: 'dhv-mkdir create, existing (restore)', target: '≤ 2× node -e 0', measure: () => once(PLUGIN, ['create'], lib.agentEnv('create', request(existing), PLUGIN)) },
      { label: 'dhv-mkdir delete, missing volume (no df, no mkdir)', measure: () => once(PLUGIN, ['delete'], lib.agentEnv('delete', { ...request(randomUUID()), parameters: null }, PLUGIN)) },
      // The SDK runtime's own floor for create: a plugin whose create does nothing.
      { label: 'minimal definePlugin plugin, create (SDK floor)', measure: () => once(minimal, ['create'], lib.agentEnv('create', request(randomUUID()), minimal)) },
      // What the free-space query spawns: check-disk-space runs `df -Pk -- <path>`.
      { label: 'df -Pk alone (spawned by check-disk-space)', measure: () => once(df, ['-Pk', '--', volumesDir], {}) },
    ].map((row) => ({ ...row, samplesMs: [] }));

    for (let round = 0; round < WARMUP + ROUNDS; round++) {
      for (const row of rows) {
        const ms = await row.measure();
        if (round >= WARMUP) row.samplesMs.push(ms);
      }
    }

    return {
      title: 'dhv-mkdir under the agent environment',
      note:
        "The bundled packages/plugin-mkdir/dist/dhv-mkdir run as `<plugin> <operation>` with exactly the agent's " +
        'environment (DHV_* only, no PATH/HOME); `node -e 0` with the same environment is the baseline. Rows are ' +
        'interleaved, one run of each per round. "create, new volume" makes a fresh volume each run (mode 0750, free ' +
        'space measured); "create, existing" is the restore call after an agent restart. "delete, missing" and the ' +
        "minimal plugin's create show the SDK runtime's own cost for create/delete (loading zod, validating the request), " +
        'with almost no work of the plugin\'s own.',
      rows: rows.map(({ label, samplesMs, baseline, target }) => ({ label, samplesMs, ...(baseline ? { baseline } : {}), ...(target ? { target } : {}) })),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A definePlugin plugin that does nothing, bundled the same way: the floor any SDK plugin's create pays. */
async function bundleMinimalPlugin(dir) {
  const entry = join(dir, 'minimal.mjs');
  const sdkPlugin = fileURLToPath(import.meta.resolve('@dhv/sdk/plugin'));
  await writeFile(
    entry,
    `import { definePlugin } from ${JSON.stringify(sdkPlugin)};\n` +
      `export default definePlugin({ name: 'minimal', version: '1.0.0', create: (r) => ({ path: r.volumesDir + '/' + r.volumeId, bytes: 0 }), delete: () => {} });\n`,
  );
  return (await bundlePlugin({ entry, outfile: join(dir, 'minimal') })).outfile;
}
