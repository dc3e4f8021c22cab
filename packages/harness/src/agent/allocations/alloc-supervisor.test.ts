import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { isRunningProcess, processStartTicks, signalProcessGroup } from '@dhv/sdk/host';
import { removeTempDir, tempDir } from '../../../../../test/support/kit.js';
import type { TaskRun } from '../state/job-records.js';

/**
 * A task's supervisor (alloc-supervisor.ts) run in the test's own process: the module is
 * loaded afresh with its spec in argv, as `startTask` starts it, its `process.exit` caught.
 * What it notes in the run file is what the client status is read from (alloc-status.ts).
 */

const SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;
let dir: string;
let argv: string[];
type Signal = (typeof SIGNALS)[number];
let before: Map<Signal, NodeJS.SignalsListener[]>;
let exit: { mock: { calls: unknown[][] } };
let tasks: number[];
beforeEach(async () => {
  dir = await tempDir('supervisor');
  argv = process.argv;
  before = new Map(SIGNALS.map((s) => [s, process.listeners(s)]));
  exit = vi.spyOn(process, 'exit').mockImplementation((() => undefined) as never);
  tasks = [];
});
afterEach(async () => {
  for (const pid of tasks) signalProcessGroup(pid, 'SIGKILL');
  for (const s of SIGNALS)
    for (const l of process.listeners(s) as NodeJS.SignalsListener[])
      if (!before.get(s)!.includes(l)) process.removeListener(s, l);
  process.argv = argv;
  vi.restoreAllMocks();
  await removeTempDir(dir);
});

/** Starts a supervisor of `command` (argv) and returns its run file and, once noted, the task's PID. */
let runs = 0;
async function supervise(command: string[], { killSignal = 'SIGINT', killTimeoutMs = 5000 } = {}) {
  const n = ++runs;
  const files = { runFile: join(dir, `run${n}.json`), stdout: join(dir, `out${n}`), stderr: join(dir, `err${n}`) };
  const listening = new Map(SIGNALS.map((s) => [s, process.listeners(s)]));
  process.argv = [
    argv[0]!,
    'alloc-supervisor.js',
    JSON.stringify({
      ...files,
      argv: command,
      env: { PATH: '/usr/bin:/bin', X: 'from-spec' },
      cwd: dir,
      killSignal,
      killTimeoutMs,
    }),
  ];
  vi.resetModules();
  await import('./alloc-supervisor.js');
  const run = await noted(files.runFile, (r) => r.pid > 0 || r.exit !== undefined);
  if (run.pid > 0) tasks.push(run.pid);
  /** Calls the listener this supervisor added for `signal`, as the signal would (never the test process's others). */
  const deliver = (signal: Signal) => {
    for (const l of process.listeners(signal) as NodeJS.SignalsListener[])
      if (!listening.get(signal)!.includes(l)) l(signal);
  };
  return { ...files, run, deliver };
}

async function noted(file: string, done: (run: TaskRun) => boolean): Promise<TaskRun> {
  for (const deadline = Date.now() + 20_000; ; await new Promise((r) => setTimeout(r, 10))) {
    const run = existsSync(file) ? (JSON.parse(await readFile(file, 'utf8')) as TaskRun) : undefined;
    if (run && done(run)) return run;
    if (Date.now() > deadline) throw new Error(`no such note in ${file}`);
  }
}

const ended = (file: string) => noted(file, (r) => r.exit !== undefined);

describe("a task's supervisor", () => {
  it('notes the task’s PID and start time, then its exit code; the task gets the spec’s environment, folder and files', async () => {
    const { runFile, stdout, stderr, run } = await supervise([
      '/bin/sh',
      '-c',
      // Still running when the supervisor reads its start time (a zombie has none to read).
      '/bin/sleep 0.5; echo "$X $(pwd)"; echo oops >&2; exit 4',
    ]);
    expect(run).toMatchObject({ supervisorPid: process.pid, supervisorStartTicks: processStartTicks(process.pid) });
    expect(run.startTicks).toBeGreaterThan(0);
    const last = await ended(runFile);
    expect(last).toMatchObject({ pid: run.pid, exit: { code: 4, signal: null } });
    expect(Date.parse(last.exit!.finishedAt)).toBeGreaterThanOrEqual(Date.parse(last.startedAt));
    expect(await readFile(stdout, 'utf8')).toBe(`from-spec ${dir}\n`);
    expect(await readFile(stderr, 'utf8')).toBe('oops\n');
    expect(exit).toHaveBeenCalledWith(0);
  });

  it('kills what the task left in its group when the task ends, as Nomad’s executor kills its cgroup', async () => {
    const { runFile } = await supervise(['/bin/sh', '-c', `sleep 300 & echo $! > ${dir}/left; exit 0`]);
    await ended(runFile);
    const left = Number(await readFile(join(dir, 'left'), 'utf8'));
    for (const deadline = Date.now() + 5000; isRunningProcess(left, 0) && Date.now() < deadline;)
      await new Promise((r) => setTimeout(r, 10));
    expect(isRunningProcess(left, 0)).toBe(false);
  });

  it('notes a command that cannot be started with the error and no PID', async () => {
    const { run } = await supervise(['/nonexistent/dhv-task']);
    expect(run).toMatchObject({ pid: 0, exit: { code: null, signal: null, error: expect.stringContaining('ENOENT') } });
    expect(exit).toHaveBeenCalledWith(0);
  });

  it('on SIGTERM sends the task’s kill signal, then SIGKILL once the kill timeout passes; ignores SIGINT and SIGHUP', async () => {
    const polite = await supervise(['/bin/sleep', '300'], { killSignal: 'SIGINT' });
    polite.deliver('SIGINT');
    polite.deliver('SIGHUP');
    expect(isRunningProcess(polite.run.pid, polite.run.startTicks)).toBe(true);
    polite.deliver('SIGTERM');
    expect((await ended(polite.runFile)).exit).toMatchObject({ code: null, signal: 'SIGINT' });

    const stubborn = await supervise(['/bin/sh', '-c', "trap '' INT; sleep 300"], {
      killSignal: 'SIGINT',
      killTimeoutMs: 100,
    });
    stubborn.deliver('SIGTERM');
    expect((await ended(stubborn.runFile)).exit).toMatchObject({ code: null, signal: 'SIGKILL' });
  });
});
