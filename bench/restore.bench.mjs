// Restore as Nomad runs it: after an agent restart, `create` for every volume in client
// state, all at once, inside one shared 50 s deadline. N volumes already on disk, N
// plugin processes started together with exactly the agent's environment, wall time until
// the last one answered. Against two baselines measured in the same rounds: the Node
// floor (a plugin that is one line of plain Node) and a bash mkdir plugin.
//
// DHV_BENCH_VOLUMES (default 300), DHV_BENCH_LOOPBACK_VOLUMES (default 30: every
// dhv-loopback volume holds a loop device and a mount on a machine that other test runs
// share; set 300 on a machine of your own), DHV_BENCH_ROUNDS (default 3).
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const DHV = join(REPO, 'packages/harness/bin/run.js');
const MKDIR = join(REPO, 'packages/plugin-mkdir/dist/dhv-mkdir');
const LOOPBACK = join(REPO, 'packages/plugin-loopback/dist/dhv-loopback');
const DEADLINE_MS = 50_000;
const MIB = 1024 * 1024;
const count = (name, fallback) => {
  const n = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a whole number above 0`);
  return n;
};
const run = promisify(execFile);

export default async function restore(lib) {
  const volumes = count('DHV_BENCH_VOLUMES', 300);
  const loopVolumes = count('DHV_BENCH_LOOPBACK_VOLUMES', 30);
  const rounds = count('DHV_BENCH_ROUNDS', 3);
  const withLoopback = process.getuid?.() === 0 && existsSync(LOOPBACK) && existsSync('/dev/loop-control');
  // Not /tmp: dhv-loopback's images need a real filesystem, and /tmp may be a tmpfs.
  const dir = await lib.makeScratch('restore', '/var/tmp');
  try {
    const plugins = await makePlugins(dir);
    const fleets = [
      fleet('bash mkdir plugin', plugins.bash, dir, volumes),
      fleet('Node floor (one line of plain Node)', plugins.nodeFloor, dir, volumes, { baseline: true }),
      fleet('dhv-mkdir', MKDIR, dir, volumes, { target: '≤ 1.3× Node floor' }),
      fleet('dhv build (minimal template), bundled script', plugins.built, dir, volumes),
      fleet('dhv build (minimal template), --sea', plugins.sea, dir, volumes),
    ];
    if (withLoopback) {
      const floor = fleet(`Node floor, ${loopVolumes} volumes`, plugins.nodeFloor, dir, loopVolumes);
      fleets.push(
        floor,
        fleet('dhv-loopback, volumes mounted', LOOPBACK, dir, loopVolumes, {
          vs: floor.label,
          target: '≤ 1.5× Node floor',
          capacity: 16 * MIB,
        }),
      );
    }
    try {
      for (const f of fleets) await seed(lib, f);
      // Round-robin, the order turned each round, so a change in the machine's load weighs on every row alike.
      for (let round = 0; round <= rounds; round++) {
        const order = fleets.map((_, i) => fleets[(i + round) % fleets.length]);
        for (const f of order) {
          const wave = await lib.runWave(f.requests.map((request) => restoreRun(lib, f, request)));
          if (wave.failed > 0)
            throw new Error(
              `${f.label}: ${wave.failed} of ${f.requests.length} restores failed: ${wave.failures.join('; ')}`,
            );
          if (round > 0) f.waves.push(wave); // round 0 warms the page cache
        }
      }
    } finally {
      if (withLoopback)
        await deleteLoopbackVolumes(
          lib,
          fleets.find((f) => f.executable === LOOPBACK),
        );
    }
    const cores = availableParallelism();
    return {
      title: `Restore as Nomad runs it: ${volumes} volumes at once${withLoopback ? ` (dhv-loopback: ${loopVolumes})` : ''}`,
      note:
        `Each round, per plugin: N volumes already made by that plugin, then N \`<plugin> create\` processes started at once ` +
        'with the exact environment the agent gives each (the saved create request, no PATH, no HOME), launched and judged as the ' +
        'SDK client does (own process group, stdout/stderr through pipes, the response decoded); the time is from the first start ' +
        'until the last one answered. Rows are interleaved, the order turned each round, after a warm-up round. ' +
        'CPU is the time the plugin processes (and whatever they ran, such as df) used, per run; peak memory is that of all ' +
        `the runs at once and the runner together (a memory cgroup; pages of the node binary that are already cached are not counted). ` +
        `"N in 50 s" is N × 50 s ÷ the wall time: how many volumes fit in Nomad's restore deadline at this rate on this ${cores}-core machine. ` +
        'The Node floor plugin is `process.stdout.write(JSON.stringify({path, bytes: 0}))`; the bash plugin runs `mkdir -p` and echoes the path. ' +
        'The `dhv build` rows are the `minimal` template of `dhv init`, built both ways. ' +
        (withLoopback
          ? `dhv-loopback is the plain agent restart: its ${loopVolumes} volumes (16 MiB ext4 each) stay attached and mounted; it is compared with the Node floor at the same N (not 300 loop devices and mounts on a machine shared with other test runs).`
          : 'dhv-loopback was left out: it needs root and /dev/loop-control.'),
      columns: ['CPU ms/run', 'peak MiB', 'N in 50 s'],
      rows: fleets.map((f) => ({
        label: f.label,
        samplesMs: f.waves.map((w) => w.wallMs),
        extra: {
          'CPU ms/run': f.waves.map((w) => w.cpuMs / f.requests.length),
          'peak MiB': f.waves.map((w) => (w.peakBytes === undefined ? undefined : w.peakBytes / MIB)),
          'N in 50 s': f.waves.map((w) => Math.floor((f.requests.length * DEADLINE_MS) / w.wallMs)),
        },
        ...(f.baseline ? { baseline: true } : {}),
        ...(f.vs ? { vs: f.vs } : {}),
        ...(f.target ? { target: f.target } : {}),
      })),
    };
  } finally {
    await lib.removeScratch(dir);
  }
}

function fleet(label, executable, dir, n, options = {}) {
  const slug = label.replace(/[^a-z0-9]+/gi, '-').toLowerCase();
  const volumesDir = join(dir, 'volumes', slug);
  const requests = Array.from({ length: n }, (_, i) => ({
    volumesDir,
    volumeId: randomUUID(),
    volumeName: `bench-${i}`,
    nodeId: 'bench-node',
    ...(options.capacity ? { capacityMinBytes: options.capacity } : {}),
  }));
  return { label, executable, volumesDir, requests, waves: [], ...options };
}

function restoreRun(lib, f, request) {
  return {
    file: f.executable,
    argv: ['create'],
    env: lib.agentEnv('create', request, f.executable),
    operation: 'create',
  };
}

/** Makes every fleet's volumes with its own plugin, as the first `volume create` would have. */
async function seed(lib, f) {
  await mkdir(f.volumesDir, { recursive: true });
  // dhv-loopback's creates run mkfs and losetup: a few at a time.
  const batch = f.executable === LOOPBACK ? 5 : 50;
  for (let i = 0; i < f.requests.length; i += batch) {
    const wave = await lib.runWave(f.requests.slice(i, i + batch).map((request) => restoreRun(lib, f, request)));
    if (wave.failed > 0) throw new Error(`${f.label}: making the volumes failed: ${wave.failures.join('; ')}`);
  }
}

async function makePlugins(dir) {
  const bin = join(dir, 'bin');
  await mkdir(bin, { recursive: true });
  const write = async (name, text) => {
    const file = join(bin, name);
    await writeFile(file, text);
    await chmod(file, 0o755);
    return file;
  };
  const mkdirTool = ['/usr/bin/mkdir', '/bin/mkdir'].find((f) => existsSync(f));
  const bash = await write(
    'bash-mkdir',
    [
      '#!/bin/bash',
      'set -e',
      'case "$DHV_OPERATION" in',
      '  fingerprint) echo \'{"version": "0.1.0"}\' ;;',
      `  create) ${mkdirTool} -p "$DHV_VOLUMES_DIR/$DHV_VOLUME_ID"; echo "{\\"path\\": \\"$DHV_VOLUMES_DIR/$DHV_VOLUME_ID\\", \\"bytes\\": 0}" ;;`,
      '  delete) ;;',
      'esac',
      '',
    ].join('\n'),
  );
  const nodeFloor = await write(
    'node-floor',
    `#!${process.execPath}\nprocess.stdout.write(JSON.stringify({ path: process.env.DHV_VOLUMES_DIR + '/' + process.env.DHV_VOLUME_ID, bytes: 0 }))\n`,
  );

  // The minimal template of `dhv init`, built as a user would build it.
  const project = join(dir, 'project');
  await mkdir(join(project, 'node_modules/@dhv'), { recursive: true });
  await symlink(join(REPO, 'packages/sdk'), join(project, 'node_modules/@dhv/sdk'));
  const template = await readFile(join(REPO, 'packages/harness/templates/minimal/src/plugin.ts'), 'utf8');
  await writeFile(join(project, 'plugin.ts'), template.replaceAll('{{pluginId}}', 'bench-plugin'));
  const build = (out, extra) =>
    run(process.execPath, [DHV, 'build', 'plugin.ts', '-o', out, ...extra], { cwd: project });
  await build('dist/script', []);
  await build('dist/sea', ['--sea']);
  return { bash, nodeFloor, built: join(project, 'dist/script'), sea: join(project, 'dist/sea') };
}

/**
 * Deletes every dhv-loopback volume this benchmark made, as the agent would; whatever is
 * left mounted or attached below the benchmark's folder goes with the folder (removeScratch).
 */
async function deleteLoopbackVolumes(lib, f) {
  if (f) {
    for (let i = 0; i < f.requests.length; i += 5) {
      await lib
        .runWave(
          f.requests.slice(i, i + 5).map((request) => ({
            file: LOOPBACK,
            argv: ['delete'],
            env: lib.agentEnv(
              'delete',
              { ...request, createdPath: join(request.volumesDir, request.volumeId) },
              LOOPBACK,
            ),
            operation: 'delete',
          })),
        )
        .catch(() => {});
    }
  }
}
