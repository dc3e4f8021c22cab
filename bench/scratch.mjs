// The folders benchmarks make volumes in, and getting rid of them whatever happens: at
// the end of a benchmark, when the run is interrupted (SIGINT, SIGTERM, SIGHUP), and, for
// a run killed outright, at the start of the next run. Removing one first unmounts what is
// mounted below it and detaches the loop devices backed by files below it.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const PREFIX = 'dhv-bench-';
const live = new Set();

/**
 * A new folder `<base>/dhv-bench-<name>-<pid>-XXXXXX`, removed by `removeScratch` or, if
 * the run ends another way, by `removeAllScratch` or the next run's `sweepDeadScratch`.
 * `base` defaults to the temp folder; dhv-loopback images need a real filesystem
 * (`/var/tmp`), since the temp folder may be a tmpfs.
 */
export async function makeScratch(name, base = tmpdir()) {
  const dir = await realpath(await mkdtemp(join(base, `${PREFIX}${name}-${process.pid}-`)));
  live.add(dir);
  return dir;
}

export async function removeScratch(dir) {
  live.delete(dir);
  await unmountAndDetachBelow(dir);
  await rm(dir, { recursive: true, force: true });
}

/** Removes every folder this run made that is still there (the interrupt handler's job). */
export async function removeAllScratch() {
  for (const dir of [...live].reverse()) await removeScratch(dir).catch(() => {});
}

/** Removes the folders of benchmark runs whose process is gone (a run killed with SIGKILL); returns them. */
export async function sweepDeadScratch(bases = [tmpdir(), '/var/tmp']) {
  const swept = [];
  for (const base of new Set(bases)) {
    for (const entry of await readdir(base).catch(() => [])) {
      const pid = /^dhv-bench-[a-z0-9-]+?-([0-9]+)-[A-Za-z0-9]{6}$/.exec(entry)?.[1];
      if (!pid || Number(pid) === process.pid || isAlive(Number(pid))) continue;
      const dir = join(base, entry);
      await removeScratch(dir).catch(() => {});
      swept.push(dir);
    }
  }
  return swept;
}

/** Whether `pid` runs (a zombie, killed and not yet reaped, does not). */
function isAlive(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

async function unmountAndDetachBelow(dir) {
  const below = (path) => path === dir || path.startsWith(`${dir}/`);
  const mountPoints = (await readFile('/proc/self/mountinfo', 'utf8').catch(() => ''))
    .split('\n')
    .map((line) => line.split(' ')[4]?.replace(/\\([0-7]{3})/g, (_, o) => String.fromCharCode(parseInt(o, 8))))
    .filter((path) => path !== undefined && below(path))
    .reverse();
  for (const path of mountPoints) await run('/usr/bin/umount', ['-l', path]).catch(() => {});
  for (const name of (await readdir('/sys/block').catch(() => [])).filter((n) => /^loop[0-9]+$/.test(n))) {
    const backing = (await readFile(`/sys/block/${name}/loop/backing_file`, 'utf8').catch(() => '')).trim();
    if (backing !== '' && below(backing)) await run('/usr/sbin/losetup', ['--detach', `/dev/${name}`]).catch(() => {});
  }
}
