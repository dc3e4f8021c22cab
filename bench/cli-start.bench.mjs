// What oclif's start-up costs a `dhv` run against the lean bundle's (bin/lite-oclif.mjs): the
// CPU of the dhv process alone (user + system, its threads included, the plugins' processes
// not), for command lines users and scripts run, each through its lean bundle and through
// oclif (DHV_LEAN=0), in turn.
//   node bench/run.mjs cli-start
import { spawn } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DHV = join(ROOT, 'packages/harness/bin/run.js');
const FIXTURE = join(ROOT, 'packages/harness/fixtures/good-plugin');
const ROUNDS = Number(process.env.DHV_BENCH_CLI_START_ROUNDS ?? 15);

const LINES = {
  'volume status': ['volume', 'status'],
  'volume delete <a name no volume has>': ['volume', 'delete', 'nope'],
  'namespace apply team-a': ['namespace', 'apply', 'team-a'],
  'plugin run <plugin> fingerprint': ['plugin', 'run', FIXTURE, 'fingerprint'],
  'check <plugin> --only discovery --no-explore': ['check', FIXTURE, '--only', 'discovery', '--no-explore'],
};

export default async function run(lib) {
  const dir = await lib.makeScratch('cli-start');
  try {
    const dataDir = join(dir, 'data');
    await mkdir(join(dataDir, 'host_volume_plugins'), { recursive: true });
    const hook = join(dir, 'usage.cjs');
    await writeFile(hook, lib.ownCpuHook());
    const usageFile = join(dir, 'usage');
    const env = { ...process.env, NO_COLOR: '1', DHV_DATA_DIR: dataDir, DHV_BENCH_USAGE_FILE: usageFile };
    delete env.NODE_EXTRA_CA_CERTS; // read at every node start: not dhv's cost
    const once = async (args, lean) => {
      await new Promise((done, fail) => {
        const child = spawn(process.execPath, ['--require', hook, DHV, ...args], {
          cwd: dir,
          env: { ...env, DHV_LEAN: lean ? '1' : '0' },
          stdio: 'ignore',
        });
        child.on('error', fail);
        child.on('close', done);
      });
      return JSON.parse(await readFile(usageFile, 'utf8')).cpuMs;
    };
    const samples = Object.fromEntries(
      Object.keys(LINES).flatMap((line) => [
        [line, []],
        [`${line} (oclif)`, []],
      ]),
    );
    // One warm-up of each (the first run of a bundle writes its code cache), then round-robin.
    for (const args of Object.values(LINES)) for (const lean of [true, false]) await once(args, lean);
    for (let i = 0; i < ROUNDS; i++)
      for (const [line, args] of Object.entries(LINES)) {
        samples[line].push(await once(args, true));
        samples[`${line} (oclif)`].push(await once(args, false));
      }
    return {
      title: "dhv's start: the lean bundle against oclif",
      note:
        'CPU time (user + system; figures in ms) of the dhv process alone, plugins not counted, per command line: ' +
        'first run from its lean bundle (`bin/lite-oclif.mjs` in place of oclif, as every command but help and the ' +
        "author's commands runs), then the same line through oclif (`DHV_LEAN=0`); " +
        `${ROUNDS} rounds in turn after one warm-up each, on a data dir with no volume, NODE_EXTRA_CA_CERTS unset. ` +
        'The ratio of an oclif row is to the lean row above it.',
      rows: Object.entries(samples).map(([label, samplesMs], i) =>
        i % 2 === 0 ? { label, samplesMs } : { label, samplesMs, vs: Object.keys(samples)[i - 1] },
      ),
    };
  } finally {
    await lib.removeScratch(dir);
  }
}
