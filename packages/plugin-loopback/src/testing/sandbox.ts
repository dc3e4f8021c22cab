import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * What the loopback tests share: a temp volumes dir per test, an inventory of what the
 * plugin left on the host (mounts, loop devices, files), and a cleanup that removes all
 * of it even after a failed test. For tests only; not part of the plugin.
 */

export const PACKAGE_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const BUILT_PLUGIN = join(PACKAGE_DIR, 'dist/dhv-loopback');

export function builtPlugin(): string {
  if (!existsSync(BUILT_PLUGIN)) {
    throw new Error(`${BUILT_PLUGIN} is missing; run \`npm run build\` (or \`npm run build -w @dhv/plugin-loopback\`) first`);
  }
  return BUILT_PLUGIN;
}

export const GIB = 1024n ** 3n;
export const MIB = 1024n ** 2n;

export function makeSandbox(prefix = 'dhv-loopback-test-'): Promise<string> {
  return mkdtemp(join('/var/tmp', prefix));
}

const unescapeMount = (field: string) => field.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(Number.parseInt(o, 8)));

export interface Mount {
  mountPoint: string;
  fsType: string;
  source: string;
  options: string[];
}

export function mounts(): Mount[] {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const [before, after] = line.split(' - ');
      const f = before!.split(' ');
      const t = after!.split(' ');
      return { mountPoint: unescapeMount(f[4]!), options: f[5]!.split(','), fsType: t[0]!, source: unescapeMount(t[1]!) };
    });
}

export function mountsUnder(dir: string): Mount[] {
  return mounts().filter((m) => m.mountPoint === dir || m.mountPoint.startsWith(`${dir}/`));
}

export interface LoopDevice {
  device: string;
  backingFile: string;
}

export function loopDevices(): LoopDevice[] {
  const found: LoopDevice[] = [];
  for (const name of readdirSync('/sys/block').filter((n) => /^loop[0-9]+$/.test(n))) {
    try {
      found.push({ device: `/dev/${name}`, backingFile: readFileSync(`/sys/block/${name}/loop/backing_file`, 'utf8').trim() });
    } catch {
      // not attached
    }
  }
  return found;
}

export function loopDevicesUnder(dir: string): LoopDevice[] {
  return loopDevices().filter((l) => l.backingFile.startsWith(`${dir}/`));
}

/** Everything under a volumes dir, relative paths, the plugin's hidden folder included: it goes once it is empty. */
export async function filesUnder(dir: string, prefix = ''): Promise<string[]> {
  const entries = await readdir(join(dir, prefix), { withFileTypes: true }).catch(() => []);
  const found: string[] = [];
  for (const entry of entries) {
    const path = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
    // Links are listed, never followed.
    if (entry.isDirectory()) found.push(...(await filesUnder(dir, path)));
    found.push(path);
  }
  return found.sort();
}

/** What a volumes dir holds on the host: all empty after a failed create or a delete. */
export async function inventory(dir: string): Promise<{ mounts: string[]; loopDevices: string[]; files: string[] }> {
  return {
    mounts: mountsUnder(dir).map((m) => m.mountPoint),
    loopDevices: loopDevicesUnder(dir).map((l) => `${l.device} (${l.backingFile})`),
    files: await filesUnder(dir),
  };
}

export const NOTHING = { mounts: [], loopDevices: [], files: [] };

const run = (file: string, args: string[]) => {
  try {
    execFileSync(file, args, { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

/** Unmounts, detaches and removes everything under `dir`, whatever state a test left it in. */
export async function destroySandbox(dir: string): Promise<void> {
  for (let pass = 0; pass < 5; pass++) {
    const here = mountsUnder(dir).sort((a, b) => b.mountPoint.length - a.mountPoint.length);
    if (here.length === 0) break;
    for (const m of here) if (!run('/usr/bin/umount', [m.mountPoint])) run('/usr/bin/umount', ['-l', m.mountPoint]);
  }
  for (const loop of loopDevicesUnder(dir)) run('/usr/sbin/losetup', ['--detach', loop.device]);
  if (mountsUnder(dir).length === 0) await rm(dir, { recursive: true, force: true });
}
