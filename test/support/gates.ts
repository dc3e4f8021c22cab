import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { mkdir, open, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { DHV_BIN, toolPath } from './kit.js';

/**
 * Gates for race tests: a plugin that reaches a gate says so (`<gate>.started`) and waits
 * on a FIFO until the test opens it. A create has two: `mkdir` before it makes the
 * volume's folder and `create` after; a delete has `delete` before it removes the folder.
 * So the recipe of a race runs in its exact order without a sleep. The gates live in `<agent dir>/gates/`, which the plugin finds from its
 * volumes dir (`<agent dir>/data/host_volumes`) by its name alone (no `..`: the volumes dir
 * does not exist before the first create makes it): a plugin gets no other environment.
 * Once a gate has been closed, every create and delete run also appends itself to
 * `gates/runs` as it starts: the order they ran in, read whenever the test likes.
 */
export const GATED_PLUGIN = `#!/bin/bash
dir="$DHV_VOLUMES_DIR/$DHV_VOLUME_ID"
gates="\${DHV_VOLUMES_DIR%/*/*}/gates/$DHV_VOLUME_NAME"
wait_at() { if [ -p "$gates.$1" ]; then echo "$$" > "$gates.$1.started"; read -t 60 _ < "$gates.$1"; fi; }
case "$1" in create | delete) [ -d "\${gates%/*}" ] && echo "$1 $DHV_VOLUME_NAME" >> "\${gates%/*}/runs" ;; esac
case "$1" in
  fingerprint) echo '{"version": "1.0.0"}' ;;
  create)
    wait_at mkdir
    /bin/mkdir -p "$dir" || exit 1
    wait_at create
    echo "{\\"path\\": \\"$dir\\", \\"bytes\\": 0}" ;;
  delete)
    wait_at delete
    /bin/rm -rf "$dir"; echo '{}' ;;
  *) echo '{"error": "unknown operation"}'; exit 1 ;;
esac
`;

/** Where a gated plugin run can be held. */
export type Gate = 'mkdir' | 'create' | 'delete';

export class Gates {
  readonly dir: string;
  constructor(agentDir: string) {
    this.dir = join(agentDir, 'gates');
  }

  /** Closes the gate of `operation` on volume `name`: the next plugin run of it waits there. */
  async close(name: string, operation: Gate): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    execFileSync('/usr/bin/mkfifo', [this.path(name, operation)]);
  }

  /** Waits until a plugin run waits at the gate. */
  async reached(name: string, operation: Gate, timeoutMs = 120_000): Promise<void> {
    await until(
      () => existsSync(`${this.path(name, operation)}.started`),
      timeoutMs,
      `the ${operation} of ${name} to reach its gate`,
    );
  }

  /** The create and delete runs started since the first gate was closed, in order: `create a`, `delete b`. */
  runs(): string[] {
    const path = join(this.dir, 'runs');
    return existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean) : [];
  }

  /** Lets the run waiting at the gate go on, and removes the gate so no later run waits. */
  async open(name: string, operation: Gate): Promise<void> {
    const path = this.path(name, operation);
    // Opening a FIFO for writing waits for its reader, which the plugin at the gate is.
    const handle = await open(path, 'w');
    await handle.write('go\n');
    await handle.close();
    await unlink(path);
  }

  private path(name: string, operation: string): string {
    return join(this.dir, `${name}.${operation}`);
  }
}

/** Waits until `child` waits for a lock: it has a flock(1) child (the agent lock's waiter). */
export async function waitingForLock(child: ChildProcess, timeoutMs = 120_000): Promise<void> {
  await until(() => flockChildren(child.pid!).length > 0, timeoutMs, `process ${child.pid} to wait for a lock`);
}

function flockChildren(pid: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid && comm === 'flock') out.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/**
 * Polls `ok` until it holds. The pause grows from 25 to 200 ms: a look may read every
 * process's /proc entry (waitingForLock, about 5 ms of processor time), and on a loaded
 * machine the wait for a `dhv` to get there lasts seconds.
 */
async function until(ok: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (let pause = 25; !ok(); pause = Math.min(200, pause * 2)) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, pause));
  }
}

/** The exit of a started process, with what it printed. */
export function finished(child: ChildProcess): Promise<{ code: number | null; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

/**
 * Starts `dhv <args> --data-dir <dataDir>` under strace, which sends `signal` to it at its
 * first `syscall` on `path` (the call made, then the signal): a kill or a stop at a chosen
 * instant, no sleep. strace's own lines go to `log`.
 */
export function dhvUnderStrace(
  agent: { dir: string; dataDir: string },
  args: readonly string[],
  {
    path,
    syscall,
    signal,
    log = '/dev/null',
  }: { path: string; syscall: string; signal: 'KILL' | 'STOP'; log?: string },
): ChildProcess {
  return spawn(
    toolPath('strace')!,
    ['-f', '-o', log, '-P', path, '-e', `trace=${syscall}`, '-e', `inject=${syscall}:signal=${signal}:when=1`].concat([
      process.execPath,
      DHV_BIN,
      ...args,
      '--data-dir',
      agent.dataDir,
    ]),
    {
      cwd: agent.dir,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, DHV_DATA_DIR: undefined, NO_COLOR: '1' },
    },
  );
}
