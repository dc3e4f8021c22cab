// dhv-mkdir latency as the agent sees it: the built plugin (packages/plugin-mkdir/dist/
// dhv-mkdir, from `npm run build`) run with the agent's exact environment (no PATH, no
// HOME), against `node -e 0` with the same environment in the same run. Targets:
// fingerprint within 1.2x, a new volume within 1.3x of `node -e 0` (the restore of an
// existing volume is judged against the Node floor in restore.bench.mjs).
import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundlePlugin } from '@dhv/sdk/build';

const PLUGIN = fileURLToPath(new URL('../packages/plugin-mkdir/dist/dhv-mkdir', import.meta.url));
const ROUNDS = 8;
const BATCH = 5;

export default async function run(lib) {
  const dir = await lib.makeScratch('mkdir');
  try {
    const volumesDir = join(dir, 'volumes');
    const request = (volumeId) => ({
      volumesDir,
      volumeId,
      volumeName: 'bench',
      nodeId: 'bench-node',
      parameters: { mode: '0750' },
    });
    // A batch of runs one after another in the wave runner, which also counts their CPU time.
    const batch = (file, args, env) => ({ file, argv: args, env });
    const fingerprintEnv = lib.agentEnv('fingerprint', {});
    const existing = randomUUID();
    const minimal = await bundleMinimalPlugin(dir);

    // One batch of each per round, so a machine busy with something else slows every row alike.
    const rows = [
      { label: 'node -e 0', baseline: true, run: () => batch(process.execPath, ['-e', '0'], fingerprintEnv) },
      {
        label: 'dhv-mkdir fingerprint',
        target: '≤ 1.2× node -e 0',
        run: () => batch(PLUGIN, ['fingerprint'], fingerprintEnv),
      },
      // A fresh volume every run: one whole create (lock, mkdir, chmod, statfs).
      {
        label: 'dhv-mkdir create, new volume',
        target: '≤ 1.3× node -e 0',
        run: () => batch(PLUGIN, ['create'], lib.agentEnv('create', request(randomUUID()), PLUGIN)),
      },
      // The restore call the agent makes for every volume after each restart.
      {
        label: 'dhv-mkdir create, existing (restore)',
        run: () => batch(PLUGIN, ['create'], lib.agentEnv('create', request(existing), PLUGIN)),
      },
      {
        label: 'dhv-mkdir delete, missing volume',
        run: () =>
          batch(PLUGIN, ['delete'], lib.agentEnv('delete', { ...request(randomUUID()), parameters: null }, PLUGIN)),
      },
      // The SDK runtime's own floor for create: a plugin whose create does nothing.
      {
        label: 'minimal definePlugin plugin, create (SDK floor)',
        run: () => batch(minimal, ['create'], lib.agentEnv('create', request(randomUUID()), minimal)),
      },
    ].map((row) => ({ ...row, samplesMs: [], cpuMs: [] }));

    for (let round = 0; round <= ROUNDS; round++) {
      for (const row of rows) {
        const wave = await lib.runWave(Array.from({ length: BATCH }, row.run), { mode: 'sequential' });
        if (wave.failed > 0) throw new Error(`${row.label}: ${wave.failures.join('; ')}`);
        if (round === 0) continue; // warm-up
        row.samplesMs.push(...wave.samplesMs);
        row.cpuMs.push(wave.cpuMs / BATCH);
      }
    }

    return {
      title: 'dhv-mkdir under the agent environment',
      note:
        "The bundled packages/plugin-mkdir/dist/dhv-mkdir run as `<plugin> <operation>` with exactly the agent's " +
        'environment (DHV_* only, no PATH/HOME); `node -e 0` with the same environment is the baseline. Rows are ' +
        `interleaved: per round, ${BATCH} runs of each, one after another, after a warm-up round; launched as the SDK client launches plugins. ` +
        '"create, new volume" makes a fresh volume each run (mode 0750, free space measured); "create, existing" is the restore call ' +
        'after an agent restart. "delete, missing" and the minimal plugin\'s create show the SDK runtime\'s own cost for create/delete, ' +
        "with almost no work of the plugin's own. CPU is the time each run used (user + system, its children included), from the " +
        "runner's waited-for children: on a loaded machine it moves less than wall time.",
      columns: ['CPU ms/run'],
      rows: rows.map(({ label, samplesMs, cpuMs, baseline, target }) => ({
        label,
        samplesMs,
        extra: { 'CPU ms/run': cpuMs },
        ...(baseline ? { baseline } : {}),
        ...(target ? { target } : {}),
      })),
    };
  } finally {
    await lib.removeScratch(dir);
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
