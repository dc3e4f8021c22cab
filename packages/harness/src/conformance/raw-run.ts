import { spawnPlugin, DEFAULT_MAX_OUTPUT_BYTES } from '@dhv/sdk/client';

/** One run of the plugin as it happened: nothing judged yet. */
export interface RawRun {
  argv: readonly string[];
  env: Record<string, string>;
  /** Set when the process could not start at all. */
  spawnError?: string;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  durationMs: number;
}

export interface RawRunOptions {
  cwd: string;
  timeoutMs: number;
  signal?: AbortSignal;
}

export async function runRaw(
  executable: string,
  argv: readonly string[],
  env: Record<string, string>,
  options: RawRunOptions,
): Promise<RawRun> {
  const run = await spawnPlugin(executable, argv, env, {
    timeoutMs: options.timeoutMs,
    signal: options.signal,
    maxOutputBytes: DEFAULT_MAX_OUTPUT_BYTES,
    cwd: options.cwd,
  });
  return {
    argv,
    env,
    ...(run.spawnError ? { spawnError: run.spawnError.message } : {}),
    exitCode: run.exitCode,
    signal: run.signal,
    stdout: run.stdout.toString('utf8'),
    stderr: run.stderr.toString('utf8'),
    timedOut: run.timedOut,
    durationMs: run.durationMs,
  };
}

/** Exit 0, started, not killed. */
export function succeeded(run: RawRun): boolean {
  return run.spawnError === undefined && !run.timedOut && run.exitCode === 0;
}

/** How a run ended, in the agent's words. */
export function describeRun(run: RawRun): string {
  if (run.spawnError) return `could not start: ${run.spawnError}`;
  if (run.timedOut) return `timed out after ${Math.round(run.durationMs)} ms and was killed`;
  const how = run.signal ? `signal: ${run.signal}` : `exit status ${run.exitCode}`;
  const said = run.stdout.trim() || run.stderr.trim();
  return said ? `${how}: ${clip(said)}` : how;
}

export function clip(text: string, max = 160): string {
  const one = text.replace(/\s+/g, ' ').trim();
  return one.length > max ? `${one.slice(0, max)}…` : one;
}
