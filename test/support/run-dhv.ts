import { spawn } from 'node:child_process';
import { DHV_BIN } from './checkout-paths.js';

/** One run of the `dhv` executable. */
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
 * Runs the real `dhv` executable as a separate process, as a user would. With `killAfterMs`, SIGKILLs it
 * at that moment unless it finished first, as a crash or an OOM kill would.
 */
export function runDhv(
  args: readonly string[],
  options: { killAfterMs?: number; input?: string; env?: NodeJS.ProcessEnv; cwd?: string } = {},
): Promise<DhvRun> {
  const started = performance.now();
  return new Promise((resolveRun, reject) => {
    const child = spawn(process.execPath, [DHV_BIN, ...args], {
      env: { ...process.env, NO_COLOR: '1', ...options.env },
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
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
