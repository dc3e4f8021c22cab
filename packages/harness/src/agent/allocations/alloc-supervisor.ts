/**
 * One task's supervisor, Nomad's executor in small: a detached process that starts the
 * task in its own process group, notes its PID (and start time) and later its exit in the
 * run file, kills the task's group on SIGTERM (the kill signal, then SIGKILL after the
 * kill timeout), and exits with it. It outlives the `dhv` command that started it; it
 * imports nothing but Node's own modules, so it starts fast and runs from dist/ as it is.
 *
 * argv[2]: JSON {runFile, stdout, stderr, argv, env, cwd, killSignal, killTimeoutMs}
 */
import { spawn } from 'node:child_process';
import { openSync } from 'node:fs';
import { processStartTicks, replaceFileSync, signalProcessGroup } from '@dhv/sdk/host';

interface SupervisorSpec {
  runFile: string;
  stdout: string;
  stderr: string;
  argv: string[];
  env: Record<string, string>;
  cwd: string;
  killSignal: NodeJS.Signals;
  killTimeoutMs: number;
}

const spec = JSON.parse(process.argv[2] ?? '{}') as SupervisorSpec;

function note(value: unknown): void {
  replaceFileSync(spec.runFile, JSON.stringify(value), { durable: true });
}

const startTicks = (pid: number): number => processStartTicks(pid) ?? 0;

const out = openSync(spec.stdout, 'a', 0o640);
const err = openSync(spec.stderr, 'a', 0o640);
const startedAt = new Date().toISOString();
const child = spawn(spec.argv[0]!, spec.argv.slice(1), {
  detached: true,
  stdio: ['ignore', out, err],
  env: spec.env,
  cwd: spec.cwd,
});
let run: Record<string, unknown> = {
  pid: 0,
  startTicks: 0,
  supervisorPid: process.pid,
  supervisorStartTicks: startTicks(process.pid),
  startedAt,
};
const killGroup = (signal: NodeJS.Signals) => {
  if (child.pid) signalProcessGroup(child.pid, signal);
};
child.on('spawn', () => {
  run = { ...run, pid: child.pid, startTicks: startTicks(child.pid!) };
  note(run);
});
child.on('error', (e) => {
  note({ ...run, exit: { code: null, signal: null, finishedAt: new Date().toISOString(), error: e.message } });
  process.exit(0);
});
child.on('exit', (code, signal) => {
  // What the task left behind in its group goes with it, as Nomad's executor kills its cgroup.
  killGroup('SIGKILL');
  note({ ...run, exit: { code, signal, finishedAt: new Date().toISOString() } });
  process.exit(0);
});
process.on('SIGTERM', () => {
  killGroup(spec.killSignal);
  setTimeout(() => killGroup('SIGKILL'), spec.killTimeoutMs).unref();
});
// Ctrl-C or a hang-up of the terminal that ran `dhv job run` is not a stop.
process.on('SIGINT', () => {});
process.on('SIGHUP', () => {});
