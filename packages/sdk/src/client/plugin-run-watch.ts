import type { ChildProcess } from 'node:child_process';
import { killOutputHolders, liveProcessesOfGroup, type LeftRunning, type OutputHolder } from './output-holders.js';
import { CappedBuffer, type PluginOutput } from './plugin-output.js';
import { errnoError, type Given, type PluginRun } from './plugin-run.js';
import { processGroupExists, signalProcessGroup, stoppedRunning } from '../helpers/signals.js';

/** How long to wait for killed processes to let go of the pipes before returning without them. */
const KILL_WAIT_MS = 2_000;
/** How long a process of the group that closed its output may take to end before it counts as left running. */
const EXITING_MS = 250;

/** The limits a started run is held to. */
export interface RunLimits {
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  maxOutputBytes: number;
  outputGraceMs?: number | undefined;
}

/** What a started run is: who it was, what it was given, and when it began. */
export interface StartedRun {
  executable: string;
  given: Given;
  child: ChildProcess;
  output: PluginOutput;
  started: number;
}

/**
 * Watches a started plugin until its run is over: it exited (or never started) and both
 * outputs closed. On the way it enforces the deadline, the abort, the output cap and the
 * grace for output held open, killing the whole group and waiting for it to let go.
 */
export function watchRun(run: StartedRun, limits: RunLimits): Promise<PluginRun> {
  return new Promise((resolve) => new RunWatch(run, limits, resolve).start());
}

class RunWatch {
  private readonly stdout: CappedBuffer;
  private readonly stderr: CappedBuffer;
  private timedOut = false;
  private aborted = false;
  private outputHeldOpen = false;
  private outputHolders: OutputHolder[] = [];
  private spawnError: NodeJS.ErrnoException | undefined;
  private exitCode: number | null = null;
  private exitSignal: NodeJS.Signals | null = null;
  private exited = false;
  private settled = false;
  private open = 2;
  private readonly timers: NodeJS.Timeout[] = [];

  constructor(
    private readonly run: StartedRun,
    private readonly limits: RunLimits,
    private readonly resolve: (run: PluginRun) => void,
  ) {
    this.stdout = new CappedBuffer(limits.maxOutputBytes);
    this.stderr = new CappedBuffer(limits.maxOutputBytes);
  }

  start(): void {
    this.readOutput();
    this.watchChild();
    const { child } = this.run;
    if (child.pid !== undefined) {
      this.timers.push(setTimeout(this.onDeadline, this.limits.timeoutMs));
      if (this.limits.signal?.aborted) this.onAbort();
      else this.limits.signal?.addEventListener('abort', this.onAbort, { once: true });
    }
  }

  private readOutput(): void {
    const [out, err] = this.run.output.streams;
    out.on('data', (chunk: Buffer) => {
      if (!this.stdout.push(chunk)) {
        this.killGroup(); // more than any response can be: stop it now
        this.stopWaitingSoon();
      }
    });
    err.on('data', (chunk: Buffer) => this.stderr.push(chunk));
    for (const s of this.run.output.streams) {
      let counted = false;
      const closed = () => {
        if (counted) return;
        counted = true;
        this.open--;
        this.maybeDone();
      };
      s.on('end', closed);
      s.on('close', closed);
      s.on('error', closed);
    }
  }

  private watchChild(): void {
    const { child } = this.run;
    child.once('error', (err: NodeJS.ErrnoException) => {
      if (child.pid === undefined) {
        this.spawnError = errnoError(this.run.executable, err.code ?? 'EIO');
        this.finish();
      }
    });
    child.once('exit', (code, sig) => {
      this.exited = true;
      this.exitCode = code;
      this.exitSignal = sig;
      this.maybeDone();
      if (!this.settled && this.limits.outputGraceMs !== undefined)
        this.timers.push(setTimeout(this.releaseOutput, this.limits.outputGraceMs));
    });
  }

  private killGroup(): void {
    if (this.run.child.pid !== undefined) signalProcessGroup(this.run.child.pid, 'SIGKILL');
  }

  private readonly onDeadline = () => {
    // It answered in time: as under the agent, a helper closing its output later is the
    // grace's to judge, which started at its exit (without a grace, the deadline ends the wait).
    if (this.exited) {
      if (this.limits.outputGraceMs === undefined) this.releaseOutput();
      return;
    }
    this.timedOut = true;
    this.killGroup();
    this.stopWaitingSoon();
  };

  private readonly onAbort = () => {
    this.aborted = true;
    this.killGroup();
    this.stopWaitingSoon();
  };

  // The plugin is done; a process it left behind holds its output. A real agent waits
  // for that process as long as it lives; dhv stops it (at the deadline, or after the grace).
  private readonly releaseOutput = () => {
    if (this.outputHeldOpen || this.settled) return;
    this.outputHeldOpen = true;
    this.outputHolders = this.run.output.holders();
    killOutputHolders(this.outputHolders);
    this.killGroup();
    this.stopWaitingSoon();
  };

  // After a kill, the pipes close once every holder is gone; one that escaped the group
  // (setsid) is found by the pipes it holds; one that cannot die (stuck in the kernel) is left.
  private stopWaitingSoon(): void {
    this.timers.push(
      setTimeout(() => {
        killOutputHolders(this.run.output.holders());
        this.timers.push(setTimeout(() => this.finish(), KILL_WAIT_MS));
      }, KILL_WAIT_MS),
    );
  }

  private maybeDone(): void {
    if ((this.exited || this.spawnError) && this.open === 0) this.finish();
  }

  private finish(): void {
    if (this.settled) return;
    this.settled = true;
    for (const t of this.timers) clearTimeout(t);
    this.limits.signal?.removeEventListener('abort', this.onAbort);
    for (const s of this.run.output.streams) s.destroy();
    void this.settle();
  }

  private async settle(): Promise<void> {
    // Nothing the plugin started may outlive the call; what still ran is said, since an agent would leave it.
    const leftRunning = await this.stillRunning();
    if (this.exited) this.killGroup();
    const result = this.record(leftRunning);
    // The run is over once what it killed is gone, not merely signalled: a SIGKILL takes effect
    // when the process is next scheduled, and until then a killed helper may hold what the
    // next call needs (a device, a lock), and a caller that says "killed" would be wrong.
    const killed = this.killedProcesses(leftRunning);
    if (killed.length > 0) await stoppedRunning(killed, KILL_WAIT_MS);
    this.resolve(result);
  }

  /** The processes this run killed that may still be dying: its output's holders, and its group once signalled. */
  private killedProcesses(leftRunning: readonly LeftRunning[]): number[] {
    const pid = this.run.child.pid;
    const groupKilled = this.exited || this.timedOut || this.aborted || this.outputHeldOpen;
    const group = groupKilled && pid !== undefined && processGroupExists(pid) ? liveProcessesOfGroup(pid) : [];
    return [...new Set([...this.outputHolders, ...leftRunning, ...group].map((p) => p.pid))];
  }

  /** The group's processes still running after a clean exit with the output closed. */
  private async stillRunning(): Promise<LeftRunning[]> {
    const pid = this.run.child.pid;
    const clean = this.exited && !this.outputHeldOpen && !this.timedOut && !this.aborted;
    const found = clean && pid !== undefined && processGroupExists(pid) ? liveProcessesOfGroup(pid) : [];
    if (found.length === 0) return [];
    // A helper closes its output on its way out, a moment before it is a zombie: not a leftover.
    const still = new Set(
      await stoppedRunning(
        found.map((p) => p.pid),
        EXITING_MS,
      ),
    );
    return found.filter((p) => still.has(p.pid));
  }

  private record(leftRunning: LeftRunning[]): PluginRun {
    return {
      ...this.run.given,
      ...(this.spawnError ? { spawnError: this.spawnError } : {}),
      exitCode: this.exitCode,
      signal: this.exitSignal,
      stdout: this.stdout.contents(),
      stderr: this.stderr.contents(),
      stdoutTruncated: this.stdout.truncated,
      stderrTruncated: this.stderr.truncated,
      timedOut: this.timedOut,
      aborted: this.aborted,
      outputHeldOpen: this.outputHeldOpen,
      outputHolders: this.outputHolders,
      ...(leftRunning.length > 0 ? { leftRunning } : {}),
      stdio: this.run.output.stdio,
      durationMs: performance.now() - this.run.started,
    };
  }
}
