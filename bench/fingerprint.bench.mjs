// Fingerprint start-up: a bundled minimal SDK plugin against a bare `node -e 0` and a
// bash plugin, all run as the agent runs them at discovery (argv `fingerprint`, an
// environment holding only DHV_OPERATION=fingerprint). The agent gives each 1 s.
import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundlePlugin } from '@dhv/sdk/build';

export default async function run(lib) {
  const dir = await lib.makeScratch('fingerprint');
  try {
    const sdkPlugin = fileURLToPath(new URL('../packages/sdk/dist/plugin.js', import.meta.url));
    const entry = join(dir, 'minimal.mjs');
    await writeFile(
      entry,
      [
        `import { definePlugin } from ${JSON.stringify(sdkPlugin)};`,
        `export default definePlugin({`,
        `  name: 'minimal',`,
        `  version: '1.0.0',`,
        `  create: (request) => ({ path: request.volumesDir + '/' + request.volumeId, bytes: 0 }),`,
        `  delete: () => {},`,
        `});`,
      ].join('\n'),
    );
    const { outfile } = await bundlePlugin({ entry, outfile: join(dir, 'minimal') });

    const bash = join(dir, 'bash-plugin');
    await writeFile(bash, '#!/bin/bash\necho \'{"version": "1.0.0"}\'\n');
    await chmod(bash, 0o755);

    const env = lib.agentEnv('fingerprint', {});
    const commands = {
      node: [process.execPath, ['-e', '0']],
      sdk: [outfile, ['fingerprint']],
      bash: [bash, ['fingerprint']],
    };
    // Round-robin, one run of each at a time, so a change in the machine's load while
    // the benchmark runs weighs on every row alike and the ratios stay fair.
    const samples = { node: [], sdk: [], bash: [] };
    for (const [file, args] of Object.values(commands)) await lib.timeProcess(file, args, { env, runs: 5, warmup: 0 });
    for (let i = 0; i < 40; i++) {
      for (const [row, [file, args]] of Object.entries(commands)) {
        samples[row].push(...(await lib.timeProcess(file, args, { env, runs: 1, warmup: 0 })));
      }
    }
    return {
      title: 'Fingerprint start-up under the agent environment',
      note:
        'A minimal definePlugin plugin bundled with bundlePlugin (one CJS file, `#!` + absolute node), ' +
        'run as `<plugin> fingerprint` with only DHV_OPERATION=fingerprint in the environment; ' +
        '`node -e 0` (same node, same environment) is the floor any Node plugin pays. The agent allows 1 s. ' +
        'The three are run in turn, 40 rounds after 5 warm-up runs each. ' +
        'For the record: before bundlePlugin kept zod out of what node parses at start-up, and before the runtime ' +
        'stopped building process.stdout, the same plugin measured 39.6 ms against 23.3 ms (1.70×) on this machine at rest.',
      rows: [
        { label: 'node -e 0', samplesMs: samples.node, baseline: true },
        { label: 'SDK plugin (bundled)', samplesMs: samples.sdk, target: '≤ 1.2× node -e 0' },
        { label: 'bash plugin (echo)', samplesMs: samples.bash },
      ],
    };
  } finally {
    await lib.removeScratch(dir);
  }
}
