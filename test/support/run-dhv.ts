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

/** What one of `runDhvInOneProcess`'s runs printed and its exit code. */
export interface DhvRunOutput {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/**
 * In one node process, the `dhv` executable's start (bin/start.js: bin/run.js without its
 * closing process.exit) evaluated afresh for each argument list (a new URL each time, so a
 * new module, and with it a new load of the bundle and of oclif), with
 * process.argv as a shell sets it and its output captured. For what dhv prints and exits with
 * and leaves nowhere else (help, usage errors): a hundred such runs cost one node start, not a
 * hundred. A run that ends the process (process.exit) ends them all, and the call throws.
 */
const ONE_PROCESS_DRIVER = `
import { pathToFileURL } from 'node:url';
const [, bin, lists] = process.argv;
const write = { stdout: process.stdout.write, stderr: process.stderr.write };
const results = [];
for (const [n, args] of JSON.parse(lists).entries()) {
  const output = { stdout: '', stderr: '' };
  for (const name of ['stdout', 'stderr'])
    process[name].write = (chunk, ...rest) => {
      output[name] += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
      rest.find((r) => typeof r === 'function')?.();
      return true;
    };
  process.argv = [process.execPath, bin, ...args];
  process.exitCode = undefined;
  const { start } = await import(new URL('start.js', pathToFileURL(bin)).href + '?run=' + n);
  await start();
  results.push({ exitCode: Number(process.exitCode ?? 0), ...output });
}
process.stdout.write = write.stdout;
process.stderr.write = write.stderr;
process.exitCode = 0;
process.stdout.write(JSON.stringify(results));
`;

export async function runDhvInOneProcess(
  argumentLists: ReadonlyArray<readonly string[]>,
  options: { env?: NodeJS.ProcessEnv } = {},
): Promise<DhvRunOutput[]> {
  const run = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolveRun, reject) => {
    const child = spawn(
      process.execPath,
      ['--input-type=module', '-e', ONE_PROCESS_DRIVER, DHV_BIN, JSON.stringify(argumentLists)],
      { env: { ...process.env, NO_COLOR: '1', ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    child.once('error', reject);
    child.once('close', (code) => resolveRun({ code, stdout, stderr }));
  });
  if (run.code !== 0)
    throw new Error(`dhv's runs in one process stopped (exit ${run.code}):\n${run.stdout}\n${run.stderr}`);
  const results = JSON.parse(run.stdout) as DhvRunOutput[];
  if (results.length !== argumentLists.length)
    throw new Error(`${results.length} of ${argumentLists.length} runs ended`);
  return results;
}
