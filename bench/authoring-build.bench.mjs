// What `dhv build` produces, measured where it matters: the start-up of the built plugin
// under the agent's environment (fingerprint has 1 s, all plugins at once), as a bundled
// script (#!/abs/node) and as a Node single executable (--sea), against `node -e 0` in the
// same run. Also the time `dhv build` itself takes for each. The plugin is the `minimal`
// template of `dhv init`.
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const DHV = join(REPO, 'packages/harness/bin/run.js');

export default async function run(lib) {
  const dir = await lib.makeScratch('build');
  try {
    await mkdir(join(dir, 'node_modules/@dhv'), { recursive: true });
    await symlink(join(REPO, 'packages/sdk'), join(dir, 'node_modules/@dhv/sdk'));
    const template = await readFile(join(REPO, 'packages/harness/templates/minimal/src/plugin.ts'), 'utf8');
    await writeFile(join(dir, 'plugin.ts'), template.replaceAll('{{pluginId}}', 'bench-plugin'));

    const env = { ...process.env };
    const build = (out, extra, runs) =>
      lib.timeProcess(process.execPath, [DHV, 'build', 'plugin.ts', '-o', out, ...extra], {
        env,
        cwd: dir,
        runs,
        warmup: 0,
      });
    const buildScript = await build('dist/script', [], 5);
    const buildSea = await build('dist/sea', ['--sea'], 2);

    const fingerprint = (file) =>
      lib.timeProcess(file, ['fingerprint'], { env: lib.agentEnv('fingerprint'), runs: 30, warmup: 3 });
    return {
      title: 'dhv build: bundled script and single executable',
      note:
        'Fingerprint wall time of the `minimal` template built both ways, under the agent environment (only DHV_OPERATION), ' +
        'against `node -e 0`; then how long `dhv build` takes (CLI start, esbuild, the fingerprint smoke test; ' +
        '--sea adds the blob, a copy of node and postject).',
      rows: [
        {
          label: 'node -e 0',
          samplesMs: await lib.timeProcess(process.execPath, ['-e', '0'], { env: {}, runs: 30, warmup: 3 }),
          baseline: true,
        },
        { label: 'fingerprint, bundled script', samplesMs: await fingerprint(join(dir, 'dist/script')) },
        { label: 'fingerprint, single executable (--sea)', samplesMs: await fingerprint(join(dir, 'dist/sea')) },
        { label: 'dhv build', samplesMs: buildScript },
        { label: 'dhv build --sea', samplesMs: buildSea },
      ],
    };
  } finally {
    await lib.removeScratch(dir);
  }
}
