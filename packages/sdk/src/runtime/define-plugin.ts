import { normalize } from 'node:path';
import { ABORT_MARGIN_MS, AGENT_TIMEOUT_MS, OPERATIONS, isOperation, type Operation } from '../protocol/operations.js';
import { ENV } from '../protocol/variables.js';
import type { CreateRequest, DeleteRequest } from '../protocol/request.js';
import type { CreateResponse, FingerprintResponse } from '../protocol/response.js';
import { encodeError, encodeResponse } from '../protocol/encode.js';
import { isGoVersion } from '../go/version.js';
import { realStderrWrite, realStdoutWrite, withOutputTo } from './output-redirect.js';
import { checkResponse, InvalidRequestError, readRequest } from './validation.js';
import { UndoStack } from './undo-stack.js';
import { forgetParameters, recallParameters, rememberParameters } from './remembered-parameters.js';
import type { ParameterSchema } from '../helpers/parameter-schema.js';
import {
  FAIL_AT_VARIABLE,
  FaultPlan,
  parseFaultPoint,
  withFaultPlan,
  type FaultPoint,
} from '../helpers/fault-injection.js';

export interface HandlerContext {
  operation: Operation;
  /** Fires shortly before the agent's deadline (or on SIGTERM/SIGINT): stop, undo, and throw. Made on first read. */
  signal: AbortSignal;
  /** Writes a line to stderr, which the agent keeps in its debug log. Never log secrets. */
  log: (message: string) => void;
  /**
   * Registers the action that reverses what the handler just did. If the handler then
   * throws (the deadline's abort included), the runtime runs every registered action,
   * newest first, before answering with the handler's own error; when it succeeds they are
   * dropped. An action that fails is logged and the others still run. It runs after the
   * signal may have fired: do not pass `ctx.signal` to it.
   */
  undo: (what: string, action: () => void | Promise<void>) => void;
  /**
   * Runs one step of the work and, when it succeeds, registers `undo` for its result (as
   * `ctx.undo` does). `invoke({ failAt: { step } })` makes a chosen step fail before it runs.
   */
  step: <T>(what: string, run: () => T | Promise<T>, undo?: (result: T) => void | Promise<void>) => Promise<T>;
  /**
   * On a create of a plugin that declares `parameters`: the keys whose values differ from
   * the volume's last successful create (an update, or a restore after one), `[]` when
   * none do, undefined on the volume's first create (or when nothing was remembered).
   */
  changedParameters?: readonly string[];
}

export interface PluginDefinition {
  /** The plugin ID, which is also its file name in the plugin directory. */
  name: string;
  /** A go-version string, reported by fingerprint unless `fingerprint` is given. */
  version: string;
  /**
   * The volume parameters the plugin reads (`parameterSchema({...})`). With it, a create
   * whose parameters the schema refuses fails before the handler runs, an update that
   * changes a `fixed` parameter is refused, and `ctx.changedParameters` says what an update
   * changed (the runtime remembers each volume's parameters beside its volumes; see
   * remembered-parameters.ts).
   */
  parameters?: ParameterSchema;
  fingerprint?: (ctx: HandlerContext) => FingerprintResponse | Promise<FingerprintResponse>;
  create: (request: CreateRequest, ctx: HandlerContext) => CreateResponse | Promise<CreateResponse>;
  delete: (request: DeleteHandlerRequest, ctx: HandlerContext) => void | Promise<void>;
}

/**
 * What a delete handler gets. On the agent's cleanup delete (an initial create whose
 * saving to client state failed) Nomad sends the volumes dir itself as
 * DHV_CREATED_PATH and an empty name and namespace (PROTOCOL.md, "The cleanup delete");
 * the runtime then sets `cleanup` and clears `createdPath`, so a handler that removes
 * `createdPath` cannot wipe every volume. Find the volume from `volumeId`.
 */
export interface DeleteHandlerRequest extends DeleteRequest {
  /** True on the agent's cleanup call; `createdPath` is then `''`, and `namespace` and `volumeName` are empty. */
  cleanup: boolean;
}

export interface Invocation {
  /** The plugin's arguments as the agent passes them: `[operation]`. */
  argv: readonly string[];
  env: Readonly<Record<string, string | undefined>>;
  /** Aborts the handler as the deadline would. */
  signal?: AbortSignal;
  /**
   * When the handler's signal fires on its own. Defaults to shortly before the agent's
   * deadline (AGENT_TIMEOUT_MS less ABORT_MARGIN_MS: 55 s for create and delete); tests
   * set it low to see a handler react to the deadline without waiting for it.
   */
  abortAfterMs?: number;
  /**
   * When the agent started the plugin, as a performance.now() time; the deadline counts
   * from then. Defaults to now. main() counts from its process's start instead, so the time node
   * took to start (long on a loaded machine) is not taken from the handler's margin.
   */
  startedAt?: number;
  /**
   * Makes the handler fail part way, for testing its undo paths: at the n-th `ctx.step`
   * (from 1) or the step of that name, or at the n-th `runTool` call or the first call of
   * that tool, with a PluginFailure whose code is EINJECTED. A plugin process (`main()`)
   * takes it from the DHVSDK_FAIL_AT variable instead, which `dhv check` sets.
   */
  failAt?: FaultPoint;
}

export interface InvocationResult {
  exitCode: number;
  /** The one JSON document written to stdout. */
  stdout: string;
  /** Everything the plugin logged. */
  stderr: string;
}

export interface Plugin {
  readonly name: string;
  readonly version: string;
  /**
   * What fingerprint writes to stdout when `version` alone decides it (no `fingerprint`
   * handler). The bundle's launcher answers fingerprint with it before node starts, so a
   * loaded client, where node's start takes most of the agent's 1 s, still finds the plugin.
   */
  readonly fixedFingerprint: string | undefined;
  /** Runs the operation named by process.argv and process.env, writes the response, and exits. */
  main(): Promise<never>;
  /** Runs one operation in-process and returns what a caller would see; never exits the process. */
  invoke(invocation: Invocation): Promise<InvocationResult>;
}

/** Exit codes: 1 when the operation failed, 2 when the plugin was called wrongly. */
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

class UsageError extends Error {}

export function definePlugin(definition: PluginDefinition): Plugin {
  if (!isGoVersion(definition.version)) {
    throw new Error(
      `definePlugin: version ${JSON.stringify(definition.version)} is not a valid go-version; use a form like "1.0.0"`,
    );
  }
  return {
    name: definition.name,
    version: definition.version,
    fixedFingerprint: definition.fingerprint ? undefined : encodeResponse({ version: definition.version }),
    invoke: (invocation) => runOperation(definition, invocation, undefined),
    main: () => runMain(definition),
  };
}

async function runOperation(
  definition: PluginDefinition,
  { argv, env, signal: outerSignal, abortAfterMs, startedAt, failAt }: Invocation,
  liveStderr: ((text: string) => void) | undefined,
): Promise<InvocationResult> {
  let stderr = '';
  const log = (text: string) => {
    if (liveStderr) liveStderr(text);
    else stderr += text;
  };
  const operation = argv[0];
  // The signal is made when a handler first reads it: most handlers never do, and a
  // plugin process that needs none starts no timer and installs no signal handlers.
  let controller: AbortController | undefined;
  let timer: NodeJS.Timeout | undefined;
  const abort = () => controller?.abort(outerSignal?.reason ?? new Error('cancelled by caller'));
  const signalOf = (op: Operation, deadline: number): AbortSignal => {
    if (controller) return controller.signal;
    const made = (controller = new AbortController());
    const stop = () => made.abort(new Error(`the agent's ${AGENT_TIMEOUT_MS[op] / 1000}s deadline is near`));
    timer = setTimeout(stop, Math.max(0, deadline - now()));
    // In-process callers must not be held up by it; a plugin process must be, since a
    // handler that waits for the signal would otherwise see node exit under it.
    if (!liveStderr) timer.unref();
    if (liveStderr) {
      for (const sig of ['SIGTERM', 'SIGINT'] as const)
        process.once(sig, () => made.abort(new Error(`received ${sig}`)));
    }
    if (outerSignal?.aborted) abort();
    else outerSignal?.addEventListener('abort', abort, { once: true });
    return made.signal;
  };
  // A plugin process counts from its own start (process.uptime(): reading `performance`
  // would load perf_hooks into every plugin run).
  const now = liveStderr ? () => process.uptime() * 1000 : () => performance.now();
  try {
    const op = checkOperation(argv, env);
    const deadline =
      abortAfterMs !== undefined
        ? now() + abortAfterMs
        : (liveStderr ? 0 : (startedAt ?? now())) + AGENT_TIMEOUT_MS[op] - ABORT_MARGIN_MS[op];
    const undo = new UndoStack();
    const faults = new FaultPlan(failAt);
    const ctx: HandlerContext = {
      operation: op,
      get signal() {
        return signalOf(op, deadline);
      },
      log: (m) => log(`${m}\n`),
      undo: (what, action) => undo.push(what, action),
      step: async (what, run, reverse) => {
        faults.check('step', what);
        const result = await run();
        if (reverse) undo.push(what, () => reverse(result));
        return result;
      },
    };
    const run = async () => {
      try {
        const response = await handle(definition, op, env, ctx);
        undo.commit();
        return response;
      } catch (err) {
        await undo.unwind(ctx.log);
        throw err;
      }
    };
    const response = await withOutputTo(
      log,
      failAt === undefined ? run : () => withFaultPlan(faults, run),
      liveStderr !== undefined,
    );
    return { exitCode: 0, stdout: response, stderr };
  } catch (err) {
    const message = errorMessage(err);
    log(`${definition.name}${operation && isOperation(operation) ? ` ${operation}` : ''}: ${message}\n`);
    if (!(err instanceof UsageError) && err instanceof Error && err.stack && !isExpectedError(err))
      log(`${err.stack}\n`);
    return { exitCode: err instanceof UsageError ? EXIT_USAGE : EXIT_FAILURE, stdout: encodeError(message), stderr };
  } finally {
    clearTimeout(timer);
    outerSignal?.removeEventListener('abort', abort);
  }
}

function checkOperation(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): Operation {
  const op = argv[0];
  const expected = `expected one of: ${OPERATIONS.join(', ')}`;
  if (op === undefined) throw new UsageError(`no operation given; ${expected}`);
  if (!isOperation(op)) throw new UsageError(`unknown operation ${JSON.stringify(op)}; ${expected}`);
  const fromEnv = env[ENV.operation];
  if (fromEnv !== op) {
    throw new UsageError(
      fromEnv === undefined
        ? `${ENV.operation} is missing; the agent sets it to the operation (${op}). To run a plugin by hand, use \`dhv plugin run\``
        : `${ENV.operation} is ${JSON.stringify(fromEnv)} but the operation argument is ${JSON.stringify(op)}; they must agree`,
    );
  }
  return op;
}

async function handle(
  definition: PluginDefinition,
  op: Operation,
  env: Readonly<Record<string, string | undefined>>,
  ctx: HandlerContext,
): Promise<string> {
  if (op === 'fingerprint') {
    const response = definition.fingerprint ? await definition.fingerprint(ctx) : { version: definition.version };
    return encodeResponse(checked('fingerprint', response));
  }
  let request;
  try {
    request = readRequest(op, env);
  } catch (err) {
    if (err instanceof InvalidRequestError) throw new UsageError(err.message);
    throw err;
  }
  if (op === 'create')
    return encodeResponse(checked('create', await create(definition, request as CreateRequest, ctx)));
  const deleteRequest = deleteHandlerRequest(request as DeleteRequest, ctx);
  await definition.delete(deleteRequest, ctx);
  if (definition.parameters) await forgetParameters(definition.name, deleteRequest.volumesDir, deleteRequest.volumeId);
  return encodeResponse(checked('delete', undefined));
}

/** A create, with the declared parameters read and compared with the volume's last ones first. */
async function create(definition: PluginDefinition, request: CreateRequest, ctx: HandlerContext): Promise<unknown> {
  const schema = definition.parameters;
  if (!schema) return definition.create(request, ctx);
  schema.read(request.parameters);
  const before = await recallParameters(definition.name, request.volumesDir, request.volumeId);
  ctx.changedParameters = before === undefined ? undefined : schema.changes(before, request.parameters);
  const response = await definition.create(request, ctx);
  try {
    await rememberParameters(definition.name, request.volumesDir, request.volumeId, request.parameters);
  } catch (err) {
    ctx.log(
      `could not remember the volume's parameters (${errorMessage(err)}); its next update will not be compared with them`,
    );
  }
  return response;
}

/** A handler's answer as the response table allows it, or the error naming every problem. */
function checked(op: Operation, response: unknown): Record<string, unknown> {
  const result = checkResponse(op, response);
  if (!result.ok) throw new Error(`${op} returned an invalid response: ${result.problems.join('; ')}`);
  return result.value;
}

/** Marks the cleanup delete: a DHV_CREATED_PATH that names the volumes dir itself. */
function deleteHandlerRequest(request: DeleteRequest, ctx: HandlerContext): DeleteHandlerRequest {
  const cleanup =
    request.createdPath !== '' &&
    withoutTrailingSlashes(request.createdPath) === withoutTrailingSlashes(request.volumesDir);
  if (!cleanup) return { ...request, cleanup };
  ctx.log(
    `the agent's cleanup delete (${ENV.createdPath} is the volumes dir): removing volume ${request.volumeId} only`,
  );
  return { ...request, createdPath: '', cleanup };
}

function withoutTrailingSlashes(path: string): string {
  return normalize(path).replace(/\/+$/, '') || '/';
}

function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  return String(err);
}

/** Errors a plugin raises on purpose carry a code; their stack would only be noise in the agent's log. */
function isExpectedError(err: Error): boolean {
  return typeof (err as { code?: unknown }).code === 'string';
}

async function runMain(definition: PluginDefinition): Promise<never> {
  let written = false;
  const finish = (exitCode: number, stdout: string): void => {
    if (written) return;
    written = true;
    try {
      realStdoutWrite(`${stdout}\n`);
    } catch (err) {
      realStderrWrite(`${definition.name}: could not write the response to stdout: ${errorMessage(err)}\n`);
    }
    process.exit(exitCode);
  };
  const crash = (err: unknown) => {
    const message = `unexpected failure: ${errorMessage(err)}`;
    realStderrWrite(`${definition.name}: ${message}\n${err instanceof Error ? (err.stack ?? '') : ''}\n`);
    finish(EXIT_FAILURE, encodeError(message));
  };
  process.on('uncaughtException', crash);
  process.on('unhandledRejection', crash);
  // Node exits with status 0 when nothing is left to wait for, even while a handler's
  // promise is pending: that would be "success" with an empty stdout.
  process.once('beforeExit', () => {
    const operation = process.argv[2] ?? 'the operation';
    const message = `${operation} never finished: its handler's promise was still pending when nothing was left that could settle it (a promise that is never resolved?)`;
    realStderrWrite(`${definition.name}: ${message}\n`);
    finish(EXIT_FAILURE, encodeError(message));
  });
  let failAt: FaultPoint | undefined;
  const asked = process.env[FAIL_AT_VARIABLE];
  try {
    failAt = asked === undefined || asked === '' ? undefined : parseFaultPoint(asked);
  } catch (err) {
    realStderrWrite(`${definition.name}: ${errorMessage(err)}\n`);
    finish(EXIT_USAGE, encodeError(errorMessage(err)));
    return new Promise<never>(() => {});
  }
  const result = await runOperation(definition, { argv: process.argv.slice(2), env: process.env, failAt }, (text) =>
    realStderrWrite(text),
  );
  finish(result.exitCode, result.stdout);
  return new Promise<never>(() => {});
}
