import type { LeftRunning, OutputHolder } from './output-holders.js';

/**
 * One run of a plugin as it happened, nothing judged yet: what the SDK's decoders, the
 * conformance checks and `dhv plugin run` all read. The output stays the bytes the plugin
 * wrote (Go decodes bytes); `outputText` is where they become text.
 */
export interface PluginRun {
  /** The arguments after the executable: `[operation]` under an agent. */
  argv: readonly string[];
  /** Exactly the environment the plugin was given. */
  env: Readonly<Record<string, string>>;
  /** Set when the process could not be started at all; `code` is the errno execve gave (or would give). */
  spawnError?: NodeJS.ErrnoException;
  /** dhv's words on why it could not start, for the lines after Nomad's. */
  spawnProblem?: string;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: Buffer;
  stderr: Buffer;
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
  timedOut: boolean;
  aborted: boolean;
  /** The plugin exited, but a process it started still held stdout or stderr at the deadline, and was killed. */
  outputHeldOpen: boolean;
  /** Who held the output then (each was killed); empty where none could be named. */
  outputHolders: OutputHolder[];
  /**
   * Processes of the plugin's group still running when it had exited and its output was
   * closed (a helper started in the background): each was killed, where a real agent
   * leaves them running. Absent where none was.
   */
  leftRunning?: LeftRunning[];
  /** What the plugin's stdout and stderr were: `pipe` as under a real agent; `socket` only where no pipe could be made. */
  stdio: 'pipe' | 'socket';
  durationMs: number;
}

export type { LeftRunning, OutputHolder };

/** What the plugin was given: the part of a run known before it starts. */
export interface Given {
  argv: readonly string[];
  env: Readonly<Record<string, string>>;
}

const UTF8 = new TextDecoder();

/** A plugin's stdout or stderr as text, decoded here only: UTF-8, each malformed sequence U+FFFD. */
export function outputText(bytes: Uint8Array): string {
  return UTF8.decode(bytes);
}

export function notStarted(
  given: Given,
  outcome: { spawnError: NodeJS.ErrnoException; spawnProblem?: string } | { aborted: true },
): PluginRun {
  return pluginRunOf({ ...given, exitCode: null, ...outcome });
}

/**
 * A run record from what is known of a run that no live process of this call made (one
 * that never started, or one read back from a recording): everything not given is what a
 * plain, untruncated run over pipes has.
 */
export function pluginRunOf(known: Given & Partial<PluginRun>): PluginRun {
  const empty = Buffer.alloc(0);
  return {
    exitCode: null,
    signal: null,
    stdout: empty,
    stderr: empty,
    stdoutTruncated: false,
    stderrTruncated: false,
    timedOut: false,
    aborted: false,
    outputHeldOpen: false,
    outputHolders: [],
    stdio: 'pipe',
    durationMs: 0,
    ...known,
  };
}

export function errnoError(path: string, code: string): NodeJS.ErrnoException {
  const err: NodeJS.ErrnoException = new Error(`spawn ${path} ${code}`);
  err.code = code;
  err.syscall = 'spawn';
  err.path = path;
  return err;
}
