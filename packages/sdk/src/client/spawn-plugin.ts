import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, fstatSync, openSync, statSync } from 'node:fs';
import { O_PATH, execKind } from './exec-format.js';
import { diagnoseExecutable, formatDiagnosis } from './spawn-diagnosis.js';
import { childStdio, closeOutputPipes, openOutputPipes, pluginOutputOf } from './plugin-output.js';
import { watchRun } from './plugin-run-watch.js';
import { errnoError, notStarted, type Given, type PluginRun } from './plugin-run.js';

export { outputText, pluginRunOf, type LeftRunning, type OutputHolder, type PluginRun } from './plugin-run.js';

/**
 * Runs a plugin executable the way Go's os/exec runs it for the agent: argv
 * `<path> <operation>`, exactly the environment given, stdin /dev/null, stdout and stderr
 * anonymous pipes, and output read until both pipes close, not only until the plugin
 * exits. Where a real agent would hang or run wild, dhv stays in control (and says so):
 * the plugin runs in its own process group, which the deadline and an abort kill whole;
 * a process still holding the pipes at the deadline is killed; output is capped.
 */
export interface SpawnOptions {
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  /** How much of stdout and of stderr to keep; more stdout than this kills the plugin. Default 4 MiB. */
  maxOutputBytes?: number | undefined;
  cwd?: string | undefined;
  /** An O_PATH descriptor of the file to run (from openPlugin): what was checked is what runs. */
  fd?: number | undefined;
  /**
   * How long stdout and stderr may stay open once the plugin has exited before whoever
   * holds them is killed (`outputHeldOpen`). Default: until the deadline.
   */
  outputGraceMs?: number | undefined;
  /**
   * Called with the plugin's PID (its process group's ID) the moment it runs, and with
   * `exited: true` once the group is killed or the run is over: a caller keeping a cleanup
   * journal records the group in between.
   */
  onProcessGroup?: ((pgid: number, exited: boolean) => void) | undefined;
}

export const DEFAULT_MAX_OUTPUT_BYTES = 4 * 1024 * 1024;

export async function spawnPlugin(
  executable: string,
  argv: readonly string[],
  env: Readonly<Record<string, string>>,
  options: SpawnOptions,
): Promise<PluginRun> {
  const run = await runPlugin(executable, argv, env, options);
  if (!run.spawnError || run.spawnProblem) return run;
  // execve's one word misleads for a file that is there (CRLF, a missing interpreter or loader): say what the kernel met.
  const diagnosis = diagnoseExecutable(executable);
  return diagnosis ? { ...run, spawnProblem: formatDiagnosis(diagnosis) } : run;
}

async function runPlugin(
  executable: string,
  argv: readonly string[],
  env: Readonly<Record<string, string>>,
  options: SpawnOptions,
): Promise<PluginRun> {
  const given = { argv: [...argv], env: { ...env } };
  if (options.signal?.aborted) return notStarted(given, { aborted: true });
  let fd = options.fd;
  let ownFd = false;
  if (fd === undefined) {
    try {
      fd = openSync(executable, O_PATH);
      ownFd = true;
    } catch (err) {
      return notStarted(given, {
        spawnError: errnoError(executable, (err as NodeJS.ErrnoException).code ?? 'ENOENT'),
      });
    }
  }
  try {
    const kind = execKind(fd);
    if (kind.kind === 'refused')
      return notStarted(given, {
        spawnError: errnoError(executable, kind.errno),
        spawnProblem: kind.fix ? `${kind.why}; ${kind.fix}` : kind.why,
      });
    // An ELF program runs from the descriptor itself, so nothing swapped in at the path since
    // the check can run; argv[0] stays the path. A script is run by its path: its interpreter
    // is handed that path as $0 and opens it again, as under a real agent.
    const execPath = kind.kind === 'elf' ? `/proc/${process.pid}/fd/${fd}` : executable;
    let pgid: number | undefined;
    const tell = options.onProcessGroup;
    const watched = tell ? { ...options, onProcessGroup: (id: number) => tell((pgid = id), false) } : options;
    const run = await startPlugin(
      executable,
      execPath,
      given,
      watched,
      kind.kind === 'script' && !ownFd ? fd : undefined,
    );
    if (pgid !== undefined) tell?.(pgid, true);
    return run;
  } finally {
    if (ownFd) closeSync(fd);
  }
}

/** A synchronous spawn failure as the errno execve gave; Node's own refusal of a NUL byte is Go's EINVAL. */
function spawnThrew(err: unknown, executable: string): NodeJS.ErrnoException {
  const e = err as NodeJS.ErrnoException;
  if (e.code === 'ERR_INVALID_ARG_VALUE' || e.code === 'ERR_INVALID_ARG_TYPE') return errnoError(executable, 'EINVAL');
  return errnoError(executable, typeof e.code === 'string' ? e.code : 'EIO');
}

async function startPlugin(
  executable: string,
  execPath: string,
  given: Given,
  options: SpawnOptions,
  /** For a script run by its path: the descriptor of the file checked, which the path must still name. */
  checked?: number,
): Promise<PluginRun> {
  const started = performance.now();
  const pipes = await openOutputPipes();
  if (options.signal?.aborted) {
    closeOutputPipes(pipes, 'both');
    return notStarted(given, { aborted: true });
  }

  let child: ChildProcess;
  try {
    // The last moment before execve opens the path again: it must still be the file checked.
    if (checked !== undefined && !sameFile(checked, executable)) {
      closeOutputPipes(pipes, 'read');
      return notStarted(given, {
        spawnError: errnoError(executable, 'ENOENT'),
        spawnProblem: 'it was replaced between the check and the start, so it was not run',
      });
    }
    child = spawn(execPath, [...given.argv], {
      argv0: executable,
      env: { ...given.env },
      cwd: options.cwd,
      detached: true, // its own process group, so the whole group can be killed
      stdio: childStdio(pipes),
    });
    if (child.pid !== undefined) options.onProcessGroup?.(child.pid, false);
  } catch (err) {
    closeOutputPipes(pipes, 'both');
    return notStarted(given, { spawnError: spawnThrew(err, executable) });
  } finally {
    // The child has its copies (or never started); ours would keep the pipes open forever.
    closeOutputPipes(pipes, 'write');
  }

  return watchRun(
    { executable, given, child, output: pluginOutputOf(pipes, child), started },
    {
      timeoutMs: options.timeoutMs,
      signal: options.signal,
      maxOutputBytes: options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES,
      outputGraceMs: options.outputGraceMs,
    },
  );
}

function sameFile(fd: number, path: string): boolean {
  try {
    const checked = fstatSync(fd);
    const now = statSync(path);
    return checked.dev === now.dev && checked.ino === now.ino;
  } catch {
    return false;
  }
}
