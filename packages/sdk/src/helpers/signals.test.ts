import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import {
  NotAProcessError,
  isRunningProcess,
  processExists,
  processGroupExists,
  processStartTicks,
  signalProcess,
  signalProcessGroup,
  signalRecordedGroup,
  stoppedRunning,
} from './signals.js';

const started: ChildProcess[] = [];
afterEach(() => {
  for (const child of started.splice(0)) child.kill('SIGKILL');
});

/** A `sleep` leading a process group of its own. */
async function sleeper(): Promise<number> {
  const child = spawn('/bin/sleep', ['30'], { detached: true, stdio: 'ignore' });
  started.push(child);
  await once(child, 'spawn');
  return child.pid!;
}

describe("signals name one process or one group, never the caller's group or every process", () => {
  it.each([0, -0, 1, -1, -42, 1.5, Number.NaN, Number.POSITIVE_INFINITY])(
    'refuses %s as a process and as a group, without sending anything',
    (id) => {
      expect(() => signalProcess(id, 'SIGKILL')).toThrow(NotAProcessError);
      expect(() => signalProcessGroup(id, 'SIGKILL')).toThrow(NotAProcessError);
      expect(() => signalRecordedGroup(id, undefined, 'SIGKILL')).toThrow(NotAProcessError);
      expect(processExists(id)).toBe(false);
      expect(processGroupExists(id)).toBe(false);
    },
  );

  it('signals a live process and its group, and says false once they are gone', async () => {
    const pid = await sleeper();
    expect(processExists(pid)).toBe(true);
    expect(processGroupExists(pid)).toBe(true);
    const exited = once(started.at(-1)!, 'exit');
    expect(signalProcessGroup(pid, 'SIGKILL')).toBe(true);
    await exited;
    expect(processExists(pid)).toBe(false);
    expect(signalProcess(pid, 'SIGKILL')).toBe(false);
    expect(signalProcessGroup(pid, 'SIGKILL')).toBe(false);
  });

  it('leaves a group alone whose leader is not the process recorded (a PID given to another)', async () => {
    const pid = await sleeper();
    const ticks = processStartTicks(pid)!;
    expect(isRunningProcess(pid, ticks)).toBe(true);
    expect(isRunningProcess(pid, ticks + 1)).toBe(false);
    expect(signalRecordedGroup(pid, ticks + 1, 'SIGKILL')).toBe(false);
    expect(signalRecordedGroup(pid, undefined, 'SIGKILL')).toBe(false);
    expect(processExists(pid)).toBe(true);
    const exited = once(started.at(-1)!, 'exit');
    expect(signalRecordedGroup(pid, ticks, 'SIGKILL')).toBe(true);
    await exited;
  });

  it('counts a zombie as not running', async () => {
    // The child dies only once the shell has become a `sleep` that never reaps it; a child that
    // died earlier could be reaped by the shell itself, and there would be no zombie to judge.
    const shell = spawn('/bin/sh', ['-c', '/bin/sleep 30 & echo $!; exec /bin/sleep 31'], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    started.push(shell);
    const [line] = (await once(shell.stdout!, 'data')) as [Buffer];
    const child = Number(line.toString().trim());
    const becameSleep = () => readFileSync(`/proc/${shell.pid}/cmdline`, 'utf8').startsWith('/bin/sleep');
    for (let i = 0; i < 200 && !becameSleep(); i++) await new Promise((r) => setTimeout(r, 10));
    expect(becameSleep()).toBe(true);
    signalProcess(child, 'SIGKILL');
    for (let i = 0; i < 200 && processStartTicks(child) !== undefined; i++) await new Promise((r) => setTimeout(r, 10));
    expect(processStartTicks(child)).toBeUndefined();
    expect(processExists(child)).toBe(true);
  });

  it('waits until the killed have stopped running, and names those still running at the deadline', async () => {
    const [killed, kept] = [await sleeper(), await sleeper()];
    signalProcess(killed, 'SIGKILL');
    expect(await stoppedRunning([killed], 5_000)).toEqual([]);
    expect(await stoppedRunning([kept], 50)).toEqual([kept]);
  });
});
