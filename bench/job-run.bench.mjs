// How long `dhv job run` takes from its start until its one task runs (goal: ≤ 1 s; Nomad's
// exec driver took about 7 s on this machine): the seed flow's job (an exec task that
// writes into a dhv-mkdir volume, mounted in its own mount namespace when run as root),
// read as HCL2 through HashiCorp's HCL WebAssembly, and the same job as the API's JSON
// (`-json`, no HCL parser), against `dhv --version` (the CLI's own floor) in the same run.
// Each timed run is followed by an untimed `job stop -purge`.
import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const DHV = fileURLToPath(new URL('../packages/harness/bin/run.js', import.meta.url));
const PLUGIN = fileURLToPath(new URL('../packages/plugin-mkdir/dist/dhv-mkdir', import.meta.url));
const ROUNDS = 8;

const VOLUME = `name = "data1"
type = "host"
plugin_id = "dhv-mkdir"
parameters {
  mode = "0750"
}
`;

const JOB = `job "writer" {
  group "g" {
    volume "data" {
      type   = "host"
      source = "data1"
    }
    task "t" {
      driver = "exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo written-by-a-task > /srv/data/hello.txt; sleep 3600"]
      }
      volume_mount {
        volume      = "data"
        destination = "/srv/data"
      }
      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
`;

export default async function run(lib) {
  const dir = await lib.makeScratch('job-run');
  const dataDir = join(dir, 'data');
  const dhv = (...args) =>
    execFileSync(process.execPath, [DHV, ...args, '--data-dir', dataDir], { cwd: dir, stdio: 'pipe' });
  try {
    const root = process.getuid?.() === 0;
    // Without root a task cannot mount its volume: time the same job without the mount.
    const job = root ? JOB : JOB.replace(/ {6}volume_mount \{[^}]*\}\n/, '');
    await writeFile(join(dir, 'job.hcl'), job);
    await mkdir(join(dataDir, 'host_volume_plugins'), { recursive: true });
    await copyFile(PLUGIN, join(dataDir, 'host_volume_plugins', 'dhv-mkdir'));
    dhv('agent', 'restart');
    await writeFile(join(dir, 'volume.hcl'), VOLUME);
    dhv('volume', 'create', join(dir, 'volume.hcl'));
    dhv('job', 'run', join(dir, 'job.hcl'));
    const api = JSON.parse(dhv('job', 'status', 'writer', '--json').toString()).Job;
    await writeFile(join(dir, 'job.json'), JSON.stringify({ Job: api }));
    dhv('job', 'stop', '-purge', 'writer');

    const time = async (args) =>
      (
        await lib.timeProcess(process.execPath, [DHV, ...args, '--data-dir', dataDir], {
          env: process.env,
          cwd: dir,
          runs: 1,
          warmup: 0,
        })
      )[0];
    const rows = [
      { label: 'dhv --version', baseline: true, args: ['--version'] },
      {
        label: 'dhv job run job.hcl (HCL2) → running',
        target: '≤ 1000 ms',
        args: ['job', 'run', join(dir, 'job.hcl')],
      },
      {
        label: 'dhv job run -json job.json → running',
        target: '≤ 1000 ms',
        args: ['job', 'run', '-json', join(dir, 'job.json')],
      },
    ].map((row) => ({ ...row, samplesMs: [] }));
    for (let round = 0; round <= ROUNDS; round++) {
      for (const row of rows) {
        const ms = await time(row.args);
        if (row.args[0] === 'job') {
          const status = JSON.parse(dhv('job', 'status', 'writer', '--json').toString());
          if (status.Allocations[0]?.ClientStatus !== 'running')
            throw new Error(`${row.label}: the allocation is ${status.Allocations[0]?.ClientStatus}, not running`);
          dhv('job', 'stop', '-purge', 'writer');
        }
        if (round > 0) row.samplesMs.push(ms);
      }
    }
    return {
      title: 'dhv job run, one task, until it runs',
      note:
        `From the start of \`dhv job run\` until it exits, which it does once the task's supervisor has noted the task's PID ` +
        `(the allocation is \`running\`). ${root ? 'As root: the exec task runs in its own mount namespace, chrooted, its volume bind-mounted.' : 'Not root: the task runs without its mount.'} ` +
        `Rows interleaved, ${ROUNDS} rounds after a warm-up round; each run is followed by an untimed \`dhv job stop -purge\`.`,
      rows: rows.map(({ label, samplesMs, baseline, target }) => ({
        label,
        samplesMs,
        ...(baseline ? { baseline } : {}),
        ...(target ? { target } : {}),
      })),
    };
  } finally {
    try {
      dhv('job', 'stop', '-purge', 'writer');
    } catch {
      // Nothing ran, or already stopped.
    }
    await lib.removeScratch(dir);
  }
}
