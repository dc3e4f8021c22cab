import { randomUUID } from 'node:crypto';
import { dirname, join } from 'node:path';
import type { TeardownScope } from '@dhv/sdk/host';
import {
  PluginError,
  buildEnvironment,
  createRequest,
  deleteRequest,
  type ExecResult,
  type PluginRun,
  type RequestInput,
} from '@dhv/sdk/client';
import { AGENT_TIMEOUT_MS, ENV } from '@dhv/sdk/plugin';
import { processRunner } from '../runner/process-runner.js';
import { HELD_OUTPUT_GRACE_MS } from './held-output.js';
import { LeftoverLooks, type CallEnd, type Leftover } from './host-leftovers.js';
import { readCreatedPath } from './inspect.js';
import { outsideVolumesDirWarning } from './outside-volumes-dir.js';
import { succeeded } from './raw-run.js';
import { CheckOutcome } from './outcome.js';
import { SandboxSpace, capacityBound, type SpaceFault } from './space-budget.js';
import type { CheckContext, CreateInput, DeleteInput, SuiteSettings } from './types.js';

/**
 * What a check can do (CheckContext): make, create and delete volumes as the agent does,
 * run the plugin raw, register cleanups, give its verdict. Each call is watched for
 * leftovers and for space past its bound; the session it belongs to is told of faults.
 */

/** The check a context belongs to, and the signal that stops its plugin runs. */
export interface Scope {
  checkId: string;
  signal: AbortSignal;
}

/** One check's own state: its sandbox, cleanups, words, and the phase it is in. */
export interface CheckState {
  sandbox: string;
  cleanups: Array<() => unknown>;
  notes: string[];
  warnings: string[];
  phase: { cleaning: boolean };
  scope: Scope;
  leftovers: Leftover[];
}

/** What a check's context needs of the session it runs in (ConformanceSession). */
export interface ContextSession {
  readonly plugin: string;
  readonly settings: SuiteSettings;
  readonly nodeId: string;
  readonly workDir: string;
  /** Aborted when cleanup must stop waiting for the plugin (a second signal). */
  readonly hurry: AbortSignal;
  scopeOf(sandbox: string): TeardownScope;
  exec<Op extends 'fingerprint' | 'create' | 'delete'>(
    operation: Op,
    request: RequestInput<Op>,
    scope: Scope,
    cleaning: boolean,
    space: SandboxSpace,
    looks: LeftoverLooks,
  ): Promise<ExecResult<Op>>;
  notice(operation: string, run: Pick<PluginRun, 'outputHeldOpen' | 'outputHolders'>, scope: Scope): void;
  noticeSpace(fault: SpaceFault): void;
  shared<T>(key: string, compute: (ctx: CheckContext) => Promise<T>, scope: Scope): Promise<T>;
}

export function checkContext(session: ContextSession, state: CheckState): CheckContext {
  const { sandbox, cleanups, notes, warnings, phase, scope, leftovers } = state;
  const volumesDir = join(sandbox, 'volumes');
  const sandboxScope = session.scopeOf(sandbox);
  const looks = new LeftoverLooks(sandboxScope, leftovers);
  const space = new SandboxSpace(sandbox, capacityBound(session.settings), scope.checkId, (fault) =>
    session.noticeSpace(fault),
  );
  const exec = <Op extends 'fingerprint' | 'create' | 'delete'>(operation: Op, request: RequestInput<Op>) => {
    if (operation === 'create') looks.started((request as Partial<DeleteInput>).volumeId);
    return looks.around(
      operation,
      request as Partial<DeleteInput>,
      () => session.exec(operation, request, scope, phase.cleaning, space, looks),
      (outcome) => ('value' in outcome ? 'succeeded' : endOfError(outcome.error)),
    );
  };
  // Volumes the check itself deleted successfully: their cleanup would only repeat that delete.
  const deleted = new Set<string>();
  const ctx: CheckContext = {
    plugin: session.plugin,
    settings: session.settings,
    volumesDir,
    sandbox,
    sandboxScope,
    leftovers,
    workDir: session.workDir,
    signal: scope.signal,
    newVolume: (overrides = {}) => newVolume(session, volumesDir, overrides),
    deleteRequest: (request, createdPath) => deleteRequest(request, createdPath),
    async provision(request) {
      let createdPath = '';
      ctx.cleanup(async () => {
        if (!deleted.has(request.volumeId)) await exec('delete', ctx.deleteRequest(request, createdPath));
      });
      const result = await exec('create', request);
      createdPath = result.path;
      looks.created(request.volumeId, result.path);
      warnWhenOutside(result.path, request.volumesDir ?? volumesDir, ctx);
      return result;
    },
    async create(request) {
      const result = await exec('create', request);
      looks.created(request.volumeId, result.path);
      warnWhenOutside(result.path, request.volumesDir ?? volumesDir, ctx);
      return result;
    },
    async delete(request) {
      const result = await exec('delete', request);
      deleted.add(request.volumeId);
      return result;
    },
    ...rawRuns(session, state, looks, space),
    cleanup: (fn) => void cleanups.push(fn),
    fail(reason): never {
      throw new CheckOutcome('fail', reason);
    },
    skip(reason): never {
      throw new CheckOutcome('skip', reason);
    },
    warn: (reason) => void warnings.push(reason),
    note: (text) => void notes.push(text),
    shared: (key, compute) => session.shared(key, compute, scope),
  };
  return ctx;
}

/** A create request for a volume of the check's own: a fresh ID, the suite's capacities and parameters. */
function newVolume(session: ContextSession, volumesDir: string, overrides: Partial<CreateInput>): CreateInput {
  const volumeId = randomUUID();
  const agent = { volumesDir, pluginDir: dirname(session.plugin), nodePool: 'default' };
  return {
    ...createRequest(agent, {
      volumeName: `dhv-check-${volumeId.slice(0, 8)}`,
      volumeId,
      nodeId: session.nodeId,
      namespace: 'default',
      capacityMinBytes: session.settings.capacityMin,
      capacityMaxBytes: session.settings.capacityMax,
      parameters: session.settings.parameters ?? null,
    }),
    ...overrides,
  };
}

/** The check's runs of the plugin as a program: its argv and environment as given, or as the agent would give them. */
function rawRuns(
  session: ContextSession,
  { phase, scope }: CheckState,
  looks: LeftoverLooks,
  space: SandboxSpace,
): Pick<CheckContext, 'runAsAgent' | 'runRaw'> {
  function runAsAgent<Op extends 'fingerprint' | 'create' | 'delete'>(
    operation: Op,
    request: RequestInput<Op>,
    options: { outputGraceMs?: number } = {},
  ) {
    return looks.around(
      operation,
      request as Partial<DeleteInput>,
      async () => {
        const run = await runRaw([operation], buildEnvironment(operation, request, session.plugin), {
          ...options,
          timeoutMs: AGENT_TIMEOUT_MS[operation],
        });
        const path = operation === 'create' && succeeded(run) ? readCreatedPath(run.stdout) : undefined;
        if (path?.ok) looks.created((request as Partial<DeleteInput>).volumeId, path.value);
        return run;
      },
      (outcome) => ('value' in outcome ? endOfRun(outcome.value) : 'not-judged'),
    );
  }
  async function runRaw(
    argv: readonly string[],
    env: Record<string, string>,
    options: Parameters<CheckContext['runRaw']>[2] = {},
  ): Promise<PluginRun> {
    if (argv[0] === 'create') looks.started(env[ENV.volumeId] ?? '');
    const run = await space.watch(argv[0] ?? '(no operation)', env, (tooBig) =>
      processRunner.runRaw(options.executable ?? session.plugin, argv, env, {
        cwd: options.cwd ?? session.workDir,
        timeoutMs: options.timeoutMs ?? AGENT_TIMEOUT_MS.create,
        outputGraceMs: options.outputGraceMs ?? HELD_OUTPUT_GRACE_MS,
        signal: AbortSignal.any([
          phase.cleaning ? session.hurry : scope.signal,
          tooBig,
          ...(options.signal ? [options.signal] : []),
        ]),
      }),
    );
    session.notice(argv[0] ?? '(no operation)', run, scope);
    looks.leftRunning(argv[0] ?? '(no operation)', env[ENV.volumeId], run.leftRunning ?? []);
    return run;
  }
  return { runAsAgent, runRaw };
}

function warnWhenOutside(path: string, volumesDir: string, ctx: CheckContext): void {
  const warning = outsideVolumesDirWarning(path, volumesDir);
  if (warning !== undefined) ctx.warn(warning);
}

/**
 * A call that threw: the plugin's own failure (it exited non-zero) is a failed call; an
 * answer the agent cannot read is not the plugin's failure, and an interruption or a
 * killed run says nothing of what it left.
 */
function endOfError(err: unknown): CallEnd {
  return err instanceof PluginError && err.code === 'PLUGIN_FAILED' ? 'failed' : 'not-judged';
}

/** A run killed at its deadline or by dhv check, or never started, left what a retry is for, as under an agent. */
function endOfRun(run: PluginRun): CallEnd {
  if (succeeded(run)) return 'succeeded';
  return run.timedOut || run.aborted || run.spawnError !== undefined ? 'not-judged' : 'failed';
}
