// Fingerprint start-up: a bundled minimal SDK plugin against a bare `node -e 0` and a
// bash plugin, all run as the agent runs them at discovery (argv `fingerprint`, an
// environment holding only DHV_OPERATION=fingerprint). The agent gives each 1 s.
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundlePlugin } from '@dhv/sdk/build';

export default async function run(lib) {
  const dir = await mkdtemp(join(tmpdir(), 'dhv-bench-fingerprint-'));
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
    const opts = { env, runs: 40, warmup: 5 };
    return {
      title: 'Fingerprint start-up under the agent environment',
      note:
        'A minimal definePlugin plugin bundled with bundlePlugin (one CJS file, `#!` + absolute node), ' +
        'run as `<plugin> fingerprint` with only DHV_OPERATION=fingerprint in the environment; ' +
        '`node -e 0` (same node, same environment) is the floor any Node plugin pays. The agent allows 1 s.',
      rows: [
        { label: 'node -e 0', samplesMs: await lib.timeProcess(process.execPath, ['-e', '0'], opts), baseline: true },
        { label: 'SDK plugin (bundled)', samplesMs: await lib.timeProcess(outfile, ['fingerprint'], opts), target: '≤ 1.5× node -e 0' },
        { label: 'bash plugin (echo)', samplesMs: await lib.timeProcess(bash, ['fingerprint'], opts) },
      ],
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
