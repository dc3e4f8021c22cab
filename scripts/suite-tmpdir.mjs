// Where one run of the suite keeps its temporary files: a folder of its own on a tmpfs
// (/dev/shm), given to every test as TMPDIR, then checked and removed when the run ends.
//
// Why: the suite makes and removes some hundred thousand files (npm installs of 50 MB
// packages, volumes, records, journals). On an ext4 filesystem without a journal, as the
// root disk of the machine the suite is timed on, every new file first scans the inodes
// freed in the last minutes (the kernel's recently_deleted); a run's own churn made that
// about a tenth of its processor time. A tmpfs has no such scan, and its files go with it.
// Debian 13, Fedora and Arch give /tmp a tmpfs too. What must be on a real disk (the loop
// images of dhv-loopback's tests) chooses /var/tmp itself.
//
// DHV_TEST_TMPDIR=<dir> gives the run that folder instead (`DHV_TEST_TMPDIR=/tmp` for the
// machine's own): it is used as it is and never removed.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync, statfsSync } from 'node:fs';
import { basename, join } from 'node:path';
import { entriesAtOrBelow, formatDeviceNumber, processExists, readMountTableSync } from '@dhv/sdk/host';

const SHM = '/dev/shm';
const TMPFS_MAGIC = 0x01021994;
const PREFIX = 'dhv-tests-';
/** A run's peak was 0.7 GB (bench/TESTS.md); with less free than this the machine's TMPDIR serves. */
const FREE_NEEDED = 4 * 1024 ** 3;

/** The run's TMPDIR, and whether this run made it (and so removes it); undefined: the machine's own. */
export function suiteTmpdir(env = process.env) {
  if (env.DHV_TEST_TMPDIR) return { dir: env.DHV_TEST_TMPDIR, own: false };
  let fs;
  try {
    fs = statfsSync(SHM);
  } catch {
    return undefined;
  }
  if (fs.type !== TMPFS_MAGIC || fs.bavail * fs.bsize < FREE_NEEDED) return undefined;
  removeStaleRuns();
  try {
    const dir = mkdtempSync(join(SHM, `${PREFIX}${process.pid}-`));
    // As /tmp: tests run some commands as nobody, which write their own files here.
    chmodSync(dir, 0o1777);
    return { dir, own: true };
  } catch {
    return undefined;
  }
}

/**
 * Ends the run's TMPDIR: says what the tests left in it, then removes it, unless a mount or
 * a loop device still holds something below it (removing then would reach through a mount,
 * or free nothing): those are named and the folder stays. Returns the lines to print.
 */
export function finishSuiteTmpdir({ dir, own }) {
  if (!own) return [];
  const held = holdersBelow(dir);
  const left = readdirSync(dir);
  const lines = [];
  if (left.length > 0) lines.push(`The tests left in their TMPDIR ${dir}: ${left.sort().join(', ')}`);
  if (held.length > 0) {
    lines.push(`Kept ${dir}, since these still hold something below it (unmount or detach them, then remove it):`);
    for (const h of held) lines.push(`  - ${h}`);
    return lines;
  }
  rmSync(dir, { recursive: true, force: true });
  return lines;
}

/** Earlier runs' folders whose runner is gone (killed before it could remove them). */
function removeStaleRuns() {
  for (const name of readdirSync(SHM)) {
    const pid = Number(new RegExp(`^${PREFIX}(\\d+)-`).exec(name)?.[1]);
    if (!pid || processExists(pid)) continue;
    const dir = join(SHM, name);
    if (holdersBelow(dir).length === 0) rmSync(dir, { recursive: true, force: true });
  }
}

/** Mounts at or below `dir` and loop devices backed by a file below it, in words. */
function holdersBelow(dir) {
  const mounts = entriesAtOrBelow(readMountTableSync(), dir).map((m) => `mounted at ${m.mountPoint}`);
  return [...mounts, ...loopDevicesBackedBelow(dir)];
}

/**
 * Loop devices whose image is below `dir`. The kernel names an image attached through a mount
 * that is gone (a namespace's) by its path below that mount's root: for an image on `dir`'s
 * filesystem, a path through the folder's unique name, or one found below `dir`, counts too.
 */
function loopDevicesBackedBelow(dir) {
  const listed = spawnSync('/usr/sbin/losetup', ['--list', '--json', '--output', 'NAME,BACK-FILE,BACK-MAJ:MIN'], {
    encoding: 'utf8',
  });
  if (listed.status !== 0 || !existsSync(dir)) return [];
  const device = formatDeviceNumber(statSync(dir).dev);
  return JSON.parse(listed.stdout)
    .loopdevices.filter(({ 'back-file': file, 'back-maj:min': backing }) => {
      const path = (file ?? '').replace(/ \(deleted\)$/, '');
      if (path.startsWith(`${dir}/`)) return true;
      return backing?.trim() === device && (path.includes(`/${basename(dir)}/`) || existsSync(join(dir, path)));
    })
    .map(({ name, 'back-file': file }) => `${name} backed by ${file}`);
}
