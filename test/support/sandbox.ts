import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { chmod, copyFile, lstat, mkdtemp, readdir, readFile, readlink, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { attachedLoopDevicesSync, deepestFirst, entriesAtOrBelow, readMountTableSync } from '@dhv/sdk/host';

/** Helpers for the reliability tests: sandboxes, byte-for-byte tree snapshots, process checks, seeded randomness. */

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const HOSTILE_FIXTURES = join(REPO_ROOT, 'test/fixtures/hostile');
export const DHV_BIN = join(REPO_ROOT, 'packages/harness/bin/run.js');

export const PLUGIN_EXECUTABLES = {
  'dhv-mkdir': join(REPO_ROOT, 'packages/plugin-mkdir/dist/dhv-mkdir'),
  'dhv-loopback': join(REPO_ROOT, 'packages/plugin-loopback/dist/dhv-loopback'),
} as const;

export type ReferencePlugin = keyof typeof PLUGIN_EXECUTABLES;

const PLUGIN_WORKSPACES: Record<ReferencePlugin, string> = {
  'dhv-mkdir': '@dhv/plugin-mkdir',
  'dhv-loopback': '@dhv/plugin-loopback',
};

/** The reference plugin's executable, built first when `dist/` does not have it yet. */
export function builtPlugin(id: ReferencePlugin): string {
  const file = PLUGIN_EXECUTABLES[id];
  if (!existsSync(file)) {
    execFileSync('npm', ['run', 'build', '-w', PLUGIN_WORKSPACES[id]], { cwd: REPO_ROOT, stdio: 'ignore' });
  }
  return file;
}

/** A fresh directory under the system temp dir; remove it with `removeSandbox`. */
export function makeSandbox(prefix: string): Promise<string> {
  return mkdtemp(join(tmpdir(), `dhv-${prefix}-`));
}

export async function removeSandbox(dir: string | undefined): Promise<void> {
  if (dir) await rm(dir, { recursive: true, force: true });
}

export interface TreeEntry {
  path: string;
  type: 'file' | 'dir' | 'symlink' | 'other';
  mode: string;
  uid: number;
  gid: number;
  /** sha256 of a file's contents, a symlink's target, or '' for directories. */
  content: string;
}

/**
 * Every entry under `root` (root included), without following symlinks: path, type,
 * permission bits, owner and a hash of the contents or the link target. Two snapshots
 * are equal exactly when nothing under `root` changed in a way a user could notice.
 */
export async function snapshotTree(root: string): Promise<TreeEntry[]> {
  const entries: TreeEntry[] = [];
  const visit = async (path: string, rel: string): Promise<void> => {
    const info = await lstat(path);
    const base = {
      path: rel || '.',
      mode: (info.mode & 0o7777).toString(8).padStart(4, '0'),
      uid: info.uid,
      gid: info.gid,
    };
    if (info.isSymbolicLink()) {
      entries.push({ ...base, type: 'symlink', content: `-> ${await readlink(path)}` });
    } else if (info.isDirectory()) {
      entries.push({ ...base, type: 'dir', content: '' });
      for (const name of (await readdir(path)).sort()) await visit(join(path, name), rel ? `${rel}/${name}` : name);
    } else if (info.isFile()) {
      entries.push({
        ...base,
        type: 'file',
        content: createHash('sha256')
          .update(await readFile(path))
          .digest('hex'),
      });
    } else {
      entries.push({ ...base, type: 'other', content: '' });
    }
  };
  await visit(root, '');
  return entries;
}

/** Whether a process exists and is not a zombie (a killed orphan may wait for a reaper that never comes). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** The PIDs a fixture recorded, one a line, in `<fixture>.pids`. */
export async function recordedPids(pidFile: string): Promise<number[]> {
  const text = await readFile(pidFile, 'utf8').catch(() => '');
  return text
    .split('\n')
    .map((line) => Number(line.trim()))
    .filter((pid) => Number.isInteger(pid) && pid > 0);
}

/** PIDs still alive after up to `graceMs` (SIGKILL is asynchronous: the kernel needs a moment). */
export async function survivors(pids: readonly number[], graceMs = 1_000): Promise<number[]> {
  const deadline = Date.now() + graceMs;
  for (;;) {
    const alive = pids.filter(processAlive);
    if (alive.length === 0 || Date.now() >= deadline) return alive;
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * Hostile fixtures installed into a plugin dir, each recording the PIDs it starts in
 * `<file>.pids`; `killLeftovers()` (in afterEach) kills whatever a failed assertion left running.
 */
export class HostileInstaller {
  private readonly pidFiles: string[] = [];

  /** Copies a fixture into `pluginDir` under `id` (default: its name without `.sh`) and returns its path. */
  async install(pluginDir: string, fixture: string, id = fixture.replace(/\.sh$/, '')): Promise<string> {
    const file = join(pluginDir, id);
    await copyFile(join(HOSTILE_FIXTURES, fixture), file);
    await chmod(file, 0o755);
    this.track(`${file}.pids`);
    return file;
  }

  /** Also watches PID files of fixtures installed by hand (a symlink, a copy outside the plugin dir). */
  track(...pidFiles: string[]): void {
    this.pidFiles.push(...pidFiles);
  }

  /** Every PID the watched fixtures recorded so far. */
  async recorded(): Promise<number[]> {
    return (await Promise.all(this.pidFiles.map(recordedPids))).flat();
  }

  async killLeftovers(): Promise<void> {
    for (const file of this.pidFiles.splice(0)) killAll(await recordedPids(file));
  }
}

/** Kills whatever a failed test left running; never throws. */
export function killAll(pids: readonly number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

/** A small, fast, seeded PRNG (mulberry32), so a generated case or crash point can be replayed from its seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)]!;
}

/** Runs `fn` over `items` with at most `limit` running at once, keeping the order of results. */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

export function median(samples: readonly number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Loop devices whose backing file lies under `dir`, found by backing file through sysfs. */
export function loopDevicesUnder(dir: string): string[] {
  return attachedLoopDevicesSync()
    .filter((l) => l.backingFile === dir || l.backingFile.startsWith(`${dir}/`))
    .map((l) => l.device);
}

/** Mount points at or below `dir` (the folder itself counts), deepest first, so they can be unmounted in that order. */
export function mountsUnder(dir: string): string[] {
  return deepestFirst(entriesAtOrBelow(readMountTableSync(), dir)).map((m) => m.mountPoint);
}

/** Unmounts and detaches everything a test left under `dir`; used in afterEach before the sandbox is removed. */
export function releaseMountsAndLoops(dir: string): void {
  for (const mountPoint of mountsUnder(dir)) {
    try {
      execFileSync('/usr/bin/umount', ['-l', mountPoint], { stdio: 'ignore' });
    } catch {
      // already unmounted
    }
  }
  for (const device of loopDevicesUnder(dir)) {
    try {
      execFileSync('/usr/sbin/losetup', ['-d', device], { stdio: 'ignore' });
    } catch {
      // already detached
    }
  }
}

export interface DhvRun {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** True when the run was cut by `killAfterMs` before it finished by itself. */
  killed: boolean;
  durationMs: number;
}

/**
 * Runs the real `dhv` executable as a separate process. With `killAfterMs`, SIGKILLs it
 * at that moment unless it finished first, as a crash or an OOM kill would.
 */
export function runDhv(
  args: readonly string[],
  options: { killAfterMs?: number; input?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<DhvRun> {
  const started = performance.now();
  return new Promise((resolveRun, reject) => {
    const child = spawn(process.execPath, [DHV_BIN, ...args], {
      env: { ...process.env, NO_COLOR: '1', ...options.env },
      stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let killed = false;
    child.stdout!.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    if (options.input !== undefined) child.stdin!.end(options.input);
    const timer =
      options.killAfterMs === undefined
        ? undefined
        : setTimeout(() => {
            killed = child.exitCode === null && child.signalCode === null;
            child.kill('SIGKILL');
          }, options.killAfterMs);
    child.once('error', reject);
    child.once('close', (exitCode, signal) => {
      clearTimeout(timer);
      resolveRun({
        exitCode,
        signal,
        stdout,
        stderr,
        killed: killed && signal === 'SIGKILL',
        durationMs: performance.now() - started,
      });
    });
  });
}

/** Processes whose command line mentions `needle` (a plugin a killed `dhv` left running, for example). */
export function processesMentioning(needle: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(needle) && processAlive(Number(name)))
        pids.push(Number(name));
    } catch {
      // gone
    }
  }
  return pids;
}

/** Waits until no process mentions `needle`, up to `timeoutMs`; returns those still running. */
export async function waitForProcessesMentioning(needle: string, timeoutMs = 15_000): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const left = processesMentioning(needle);
    if (left.length === 0 || Date.now() >= deadline) return left;
    await new Promise((r) => setTimeout(r, 50));
  }
}
