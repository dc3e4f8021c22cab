import { randomUUID } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import type { TeardownScope } from '@dhv/sdk/host';
import {
  PluginError,
  buildEnvironment,
  valueWithRun,
  type ExecResult,
  type PluginRun,
  type RequestInput,
} from '@dhv/sdk/client';
import { processRunner } from '../runner/process-runner.js';
import { checkContext, type CheckState, type Scope } from './check-context.js';
import { HELD_OUTPUT_GRACE_MS, heldOutputFault, type HeldOutputFault } from './held-output.js';
import { summariseLeftovers, type Leftover, type LeftoverLooks } from './host-leftovers.js';
import { CheckOutcome, describeUnexpected } from './outcome.js';
import { forceRemove, makeRunRoot, removeRunRoot } from './scratch-dirs.js';
import { describeSpaceFault, type SandboxSpace, type SpaceFault } from './space-budget.js';
import {
  describeCheck,
  type Check,
  type CheckContext,
  type CheckResult,
  type DeleteInput,
  type Status,
  type SuiteSettings,
} from './types.js';

/**
 * One run of the suite against one plugin: the run-wide temporary root, the values
 * computed once and shared by several checks, and the running of a single check with
 * its own sandbox and cleanup. Both front doors (the runner and the vitest API) use it.
 */
export class ConformanceSession {
  readonly plugin: string;
  readonly nodeId = randomUUID();
  private root: string | undefined;
  /** The root in the kernel's terms, resolved when it was made. */
  private canonicalRoot = '';
  private starting: Promise<string> | undefined;
  private workDir = '';
  private counter = 0;
  private readonly sharedValues = new Map<string, Promise<unknown>>();
  private readonly sharedCleanups: Array<() => unknown> = [];
  private readonly results = new Map<string, Status>();
  private readonly sharedPhase = { cleaning: false };
  /** Each running check's own stop, so that a fault found by one check ends the others. */
  private readonly runningStops = new Map<string, AbortController>();
  private faultFound: HeldOutputFault | undefined;
  /** Every call that took more space than its bound, by the check it ran in. */
  private readonly spaceFaults = new Map<string, SpaceFault>();
  private firstSpaceFault: SpaceFault | undefined;

  constructor(
    plugin: string,
    readonly settings: SuiteSettings,
    private readonly parentDir: string | undefined,
    private readonly signal: AbortSignal = new AbortController().signal,
    /** Told of the fault the moment it is found. */
    private readonly onFault?: (fault: HeldOutputFault) => void,
    /** Told of the first call that took more space than its bound, the moment it is stopped. */
    private readonly onSpaceFault?: (fault: SpaceFault) => void,
    /** Aborted when cleanup must stop waiting for the plugin (a second signal). */
    private readonly hurry: AbortSignal = new AbortController().signal,
  ) {
    this.plugin = resolve(plugin);
  }

  /** The run-wide temporary root; created once, on first use, however many checks start at once. */
  start(): Promise<string> {
    this.starting ??= (async () => {
      if (this.parentDir !== undefined) await mkdir(this.parentDir, { recursive: true });
      const { path: root, canonical } = await makeRunRoot(this.parentDir);
      this.workDir = join(root, 'elsewhere');
      await mkdir(this.workDir);
      this.root = root;
      this.canonicalRoot = canonical;
      return root;
    })();
    return this.starting;
  }

  /** Runs one check: skipped when a check it needs did not pass; cleanup always runs. */
  async runCheck(check: Check): Promise<CheckResult> {
    const root = await this.start();
    const started = performance.now();
    const sandbox = join(root, `${String(++this.counter).padStart(2, '0')}-${check.id}`);
    const teardown = this.scopeOf(sandbox);
    const base = describeCheck(check);
    const blocker = this.blocker(check);
    if (blocker !== undefined) {
      this.results.set(check.id, 'skip');
      return { ...base, status: 'skip', reason: blocker, notes: [], durationMs: 0 };
    }

    const cleanups: Array<() => unknown> = [];
    const phase = { cleaning: false };
    const notes: string[] = [];
    const warnings: string[] = [];
    const leftovers: Leftover[] = [];
    const stop = new AbortController();
    this.runningStops.set(check.id, stop);
    const scope = { checkId: check.id, signal: AbortSignal.any([this.signal, stop.signal]) };
    let status: Status = 'pass';
    let reason: string | undefined;
    try {
      await mkdir(join(sandbox, 'volumes'), { recursive: true });
      await check.run(this.context({ sandbox, cleanups, notes, warnings, phase, scope, leftovers }));
    } catch (err) {
      if (err instanceof CheckOutcome) {
        status = err.status;
        reason = err.reason;
      } else {
        status = 'fail';
        reason = describeUnexpected(err);
      }
    } finally {
      phase.cleaning = true;
      for (const problem of await runCleanups(cleanups, teardown)) notes.push(`cleanup: ${problem}`);
      this.runningStops.delete(check.id);
    }
    const spaceFault = this.spaceFaults.get(check.id);
    if (spaceFault !== undefined) {
      status = 'fail';
      reason = describeSpaceFault(spaceFault);
    } else if (status === 'fail' && this.signal.aborted) {
      // Its plugin runs were killed by the interruption: that says nothing about the plugin.
      status = 'skip';
      reason = `the run was interrupted while this check ran (${reason ?? ''})`;
    } else if (status === 'fail' && stop.signal.aborted) {
      status = 'skip';
      reason = `not judged: the run stopped when ${this.stopCause()} (${reason ?? ''})`;
    }
    // Never silent housekeeping: what the plugin left is said wherever it was found, with what dhv check did.
    const unsaid = leftovers.filter((l) => !reason?.includes(l.message));
    const left = summariseLeftovers(unsaid);
    if (left !== undefined && status === 'pass') warnings.push(left);
    else if (left !== undefined) notes.push(unsaid.length === 1 ? unsaid[0]!.message : left);
    if (status === 'pass' && warnings.length > 0) {
      status = 'warn';
      reason = warnings.join('; ');
    }
    this.results.set(check.id, status);
    return {
      ...base,
      status,
      ...(reason !== undefined ? { reason } : {}),
      notes,
      durationMs: performance.now() - started,
    };
  }

  /** Why a check cannot run: a check it needs failed or was skipped. */
  private blocker(check: Check): string | undefined {
    const blocker = (check.needs ?? []).find((id) => {
      const status = this.results.get(id);
      return status === 'fail' || status === 'skip';
    });
    if (blocker === undefined) return undefined;
    return `needs ${blocker}, which ${this.results.get(blocker) === 'fail' ? 'failed' : 'was skipped'}`;
  }

  /** The first plugin run whose output a leftover process held open, once one was seen: the run stops there. */
  get fault(): HeldOutputFault | undefined {
    return this.faultFound;
  }

  /** The first plugin call stopped for taking more space than its bound: the run stops there. */
  get spaceFault(): SpaceFault | undefined {
    return this.firstSpaceFault;
  }

  /** Why the other checks were stopped, in words. */
  private stopCause(): string {
    if (this.firstSpaceFault !== undefined)
      return `${this.firstSpaceFault.checkId} found the plugin taking more space than it was asked for`;
    return `${this.faultFound?.checkId ?? 'another check'} found a process holding the plugin's output`;
  }

  /** A call stopped for its space fails its check and stops every other running check. */
  private noticeSpace(fault: SpaceFault): void {
    if (!this.spaceFaults.has(fault.checkId)) this.spaceFaults.set(fault.checkId, fault);
    if (this.firstSpaceFault !== undefined) return;
    this.firstSpaceFault = fault;
    for (const stop of this.runningStops.values()) stop.abort();
    this.onSpaceFault?.(fault);
  }

  /** Removes everything the run made. Returns what could not be undone. */
  async close(): Promise<string[]> {
    if (this.root === undefined) return [];
    this.sharedPhase.cleaning = true;
    const problems = await runCleanups(this.sharedCleanups, { dir: this.root, canonical: this.canonicalRoot });
    problems.push(...(await removeRunRoot(this.root)));
    this.root = undefined;
    this.starting = undefined;
    return problems;
  }

  /**
   * Runs one operation as the agent does (through the process runner), except that
   * output a leftover process holds past HELD_OUTPUT_GRACE_MS is released then: a real
   * agent would wait for it, and each further operation would wait its whole deadline.
   */
  private async exec<Op extends 'fingerprint' | 'create' | 'delete'>(
    operation: Op,
    request: RequestInput<Op>,
    scope: Scope,
    cleaning: boolean,
    space: SandboxSpace,
    looks: LeftoverLooks,
  ): Promise<ExecResult<Op>> {
    const env = buildEnvironment(operation, request, this.plugin);
    const result = await space.watch(operation, env, (tooBig) =>
      processRunner.run(operation, {
        plugin: this.plugin,
        request,
        cwd: this.workDir,
        // Cleanup is not cancelled with the run: an interrupted run still deletes what it made.
        signal: AbortSignal.any([cleaning ? this.hurry : scope.signal, tooBig]),
        outputGraceMs: HELD_OUTPUT_GRACE_MS,
      }),
    );
    this.notice(operation, result, scope);
    looks.leftRunning(operation, (request as Partial<DeleteInput>).volumeId, result.leftRunning);
    return valueWithRun(result);
  }

  /** The first run whose output was held open becomes the run's fault, and stops every other running check. */
  private notice(operation: string, run: Pick<PluginRun, 'outputHeldOpen' | 'outputHolders'>, scope: Scope): void {
    if (!run.outputHeldOpen || this.faultFound !== undefined) return;
    this.faultFound = heldOutputFault(scope.checkId, operation, run);
    for (const [id, stop] of this.runningStops) if (id !== scope.checkId) stop.abort();
    this.onFault?.(this.faultFound);
  }

  /** A folder of the root in the kernel's terms: the root as resolved when made, never again. */
  private scopeOf(sandbox: string): TeardownScope {
    return { dir: sandbox, canonical: join(this.canonicalRoot, basename(sandbox)) };
  }

  /** The context one check runs with, in its sandbox. */
  private context(state: CheckState): CheckContext {
    return checkContext(
      {
        plugin: this.plugin,
        settings: this.settings,
        nodeId: this.nodeId,
        workDir: this.workDir,
        hurry: this.hurry,
        scopeOf: this.scopeOf.bind(this),
        exec: this.exec.bind(this),
        notice: this.notice.bind(this),
        noticeSpace: this.noticeSpace.bind(this),
        shared: this.shared.bind(this),
      },
      state,
    );
  }

  private shared<T>(key: string, compute: (ctx: CheckContext) => Promise<T>, scope: Scope): Promise<T> {
    let value = this.sharedValues.get(key) as Promise<T> | undefined;
    if (value === undefined) {
      value = (async () => {
        const sandbox = join(await this.start(), `shared-${key}`);
        await mkdir(join(sandbox, 'volumes'), { recursive: true });
        const teardown = this.scopeOf(sandbox);
        this.sharedCleanups.push(() => forceRemove(teardown.dir, teardown.canonical).then(throwProblems));
        return compute(
          this.context({
            sandbox,
            cleanups: this.sharedCleanups,
            notes: [],
            warnings: [],
            phase: this.sharedPhase,
            scope,
            leftovers: [],
          }),
        );
      })();
      this.sharedValues.set(key, value);
    }
    return value;
  }
}

/** Runs cleanups newest first, then forcibly removes the scope's folder; collects what went wrong instead of throwing. */
async function runCleanups(cleanups: Array<() => unknown>, scope: TeardownScope): Promise<string[]> {
  const problems: string[] = [];
  while (cleanups.length > 0) {
    const fn = cleanups.pop()!;
    try {
      await fn();
    } catch (err) {
      // The plugin's own delete failing here is already judged by the check; only our own failures matter.
      if (!(err instanceof PluginError)) problems.push(describeUnexpected(err));
    }
  }
  problems.push(...(await forceRemove(scope.dir, scope.canonical)));
  return problems;
}

function throwProblems(problems: string[]): void {
  if (problems.length > 0) throw new Error(problems.join('; '));
}
