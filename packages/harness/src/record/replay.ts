import { constants } from 'node:fs';
import { access, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { AGENT_TIMEOUT_MS, ENV, OPERATIONS, type Operation } from '@dhv/sdk';
import { judgeRun, pluginRunOf, type PluginRun } from '@dhv/sdk/client';
import { UsageError } from '../errors/dhv-error.js';
import { journalProcessGroups, processRunner } from '../runner/process-runner.js';
import { pathMapFor, type PathMap } from './path-map.js';
import { readTrace, recordedBytes, type RecordedCall, type TraceCall } from './recorded-call.js';

/** One way a replayed answer differs from the recorded one, both in the recording's terms. */
export const COMPARED_FIELDS = ['exit', 'stdout', 'stderr', 'path', 'bytes', 'version', 'error'] as const;

export interface CallDifference {
  field: (typeof COMPARED_FIELDS)[number];
  recorded: string;
  replayed: string;
}

export interface DifferingCall {
  /** The call's place in the replay, from 1. */
  index: number;
  /** Where it is in the trace: `line 12`, `step 3, call 2`. */
  where: string;
  operation: string;
  volumeId?: string | undefined;
  differences: CallDifference[];
}

export interface ReplayReport {
  trace: string;
  plugin: string;
  pluginId: string;
  calls: number;
  same: number;
  differ: number;
  /** Calls of other plugins in the trace, left out: plugin ID → count. */
  otherPlugins: Record<string, number>;
  /** Lines of the trace not replayed, and why (a last line cut short). */
  skipped: string[];
  differing: DifferingCall[];
  /** Milliseconds: the plugin's runs under replay, and as the trace recorded them (when it did). */
  pluginMs: number;
  recordedMs: number | null;
  /** Anything the sandbox's removal could not undo (a mount left by the plugin, say). */
  cleanupProblems: string[];
}

export interface ReplayOptions {
  trace: string;
  plugin: string;
  /** The trace's plugin to replay; default: its only one, else the one named as the plugin's file. */
  pluginId?: string | undefined;
  /** Fields not compared: `stderr` (what the agent only logs), `bytes` and `stdout` (a plugin answering the free space), ... */
  ignore?: readonly CallDifference['field'][] | undefined;
  signal?: AbortSignal | undefined;
  /** Where the sandbox goes; default: the system's temp dir. */
  tmpDir?: string | undefined;
}

/**
 * Runs a recorded sequence of plugin calls, in order, against another build of the plugin
 * in a sandbox (the recorded volumes and plugin dirs mapped to fresh folders, IDs kept,
 * the environment otherwise as recorded) and compares each answer with the recorded one,
 * as bytes and as the agent reads them. The sandbox is removed on every way out, mounts
 * and loop devices a plugin left in it included.
 */
export async function replayTrace(options: ReplayOptions): Promise<ReplayReport> {
  const plugin = resolve(options.plugin);
  await access(plugin, constants.X_OK).catch((err: NodeJS.ErrnoException) => {
    throw new UsageError(`cannot run the plugin ${plugin}: ${err.code ?? err.message}`, 'REPLAY_NO_PLUGIN', { plugin });
  });
  const { calls: all, skipped } = await readTrace(options.trace);
  const pluginId = choosePlugin(all, options.pluginId, basename(plugin));
  const calls = all.filter((c) => c.call.plugin === pluginId);
  const otherPlugins: Record<string, number> = {};
  for (const { call } of all)
    if (call.plugin !== pluginId) otherPlugins[call.plugin] = (otherPlugins[call.plugin] ?? 0) + 1;

  // The sandbox and the plugin's process groups in the cleanup journal before they exist: a
  // replay killed outright leaves them to the next dhv command.
  const journal = journalProcessGroups();
  const { path: root } = await journal.makeFolder(options.tmpDir ?? tmpdir(), 'dhv-replay-');
  const cleanupProblems: string[] = [];
  try {
    const sandbox = join(root, 'agent');
    const { map, folders } = pathMapFor(
      calls.map((c) => c.call),
      sandbox,
    );
    for (const folder of [sandbox, ...folders]) await mkdir(folder, { recursive: true, mode: 0o700 });
    const differing: DifferingCall[] = [];
    let pluginMs = 0;
    let recordedMs: number | null = 0;
    const ignored = new Set<string>(options.ignore ?? []);
    for (const [i, traced] of calls.entries()) {
      if (options.signal?.aborted) throw options.signal.reason;
      const outcome = await replayOne(traced, plugin, map, options);
      pluginMs += outcome.durationMs;
      recordedMs =
        recordedMs === null || traced.call.duration_ms === undefined ? null : recordedMs + traced.call.duration_ms;
      const differences = outcome.differences.filter((d) => !ignored.has(d.field));
      if (differences.length > 0)
        differing.push({
          index: i + 1,
          where: traced.where,
          operation: outcome.operation,
          volumeId: outcome.volumeId,
          differences,
        });
    }
    if (options.signal?.aborted) throw options.signal.reason;
    return {
      trace: options.trace,
      plugin,
      pluginId,
      calls: calls.length,
      same: calls.length - differing.length,
      differ: differing.length,
      otherPlugins,
      skipped,
      differing,
      pluginMs,
      recordedMs,
      cleanupProblems,
    };
  } finally {
    cleanupProblems.push(...(await journal.removeFolder(root)));
  }
}

function choosePlugin(calls: TraceCall[], wanted: string | undefined, fileName: string): string {
  const ids = [...new Set(calls.map((c) => c.call.plugin))];
  if (wanted !== undefined) {
    if (!ids.includes(wanted))
      throw new UsageError(
        `the trace has no call of plugin ${JSON.stringify(wanted)} (it has: ${ids.join(', ') || 'none'})`,
        'TRACE_NO_PLUGIN',
      );
    return wanted;
  }
  if (ids.length === 1) return ids[0]!;
  if (ids.includes(fileName)) return fileName;
  throw new UsageError(
    ids.length === 0
      ? 'the trace holds no plugin call'
      : `the trace has calls of ${ids.length} plugins (${ids.join(', ')}); name the one to replay with --id`,
    'TRACE_NO_PLUGIN',
  );
}

async function replayOne(
  traced: TraceCall,
  executable: string,
  map: PathMap,
  options: ReplayOptions,
): Promise<{ operation: string; volumeId?: string | undefined; differences: CallDifference[]; durationMs: number }> {
  const { call } = traced;
  const operation = call.argv[0] ?? call.env[ENV.operation] ?? '';
  const protocol = (OPERATIONS as readonly string[]).includes(operation) ? (operation as Operation) : undefined;
  const timeoutMs = AGENT_TIMEOUT_MS[protocol ?? 'create'];
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(call.env)) env[name] = map.forward(value);
  const run = await processRunner.runRaw(executable, call.argv, env, { timeoutMs, signal: options.signal });
  const volumeId = call.env[ENV.volumeId];
  const differences: CallDifference[] = [];
  const replayedExit = exitOf(run);
  const recordedExit = call.signal ? `signal ${call.signal}` : `exit ${call.exit}`;
  if (replayedExit !== recordedExit)
    differences.push({ field: 'exit', recorded: recordedExit, replayed: replayedExit });
  for (const stream of ['stdout', 'stderr'] as const) {
    const recorded = recordedBytes(call, stream);
    const replayed = map.backwardBytes(run[stream]);
    if (!recorded.equals(replayed))
      differences.push({ field: stream, recorded: shown(recorded), replayed: shown(replayed) });
  }
  if (protocol) differences.push(...verdictDifferences(protocol, call, run, executable, map, timeoutMs));
  return { operation, volumeId, differences, durationMs: run.durationMs };
}

/** What the agent makes of each answer: the version, the path and size, or its error line. */
function verdictDifferences(
  operation: Operation,
  call: RecordedCall,
  run: PluginRun,
  executable: string,
  map: PathMap,
  timeoutMs: number,
): CallDifference[] {
  const context = { pluginId: call.plugin, executable, volumeId: call.env[ENV.volumeId], timeoutMs };
  const recorded = judgeRun(operation, recordedRun(call), context);
  const replayed = judgeRun(operation, run, context);
  const out: CallDifference[] = [];
  const differ = (field: CallDifference['field'], a: string, b: string) => {
    if (a !== b) out.push({ field, recorded: a, replayed: b });
  };
  if (recorded.ok && replayed.ok) {
    const a = recorded.value as { version?: string; path?: string; bytes?: bigint };
    const b = replayed.value as typeof a;
    if (a.version !== undefined) differ('version', a.version, String(b.version));
    if (a.path !== undefined) differ('path', a.path, map.backward(String(b.path)));
    if (a.bytes !== undefined) differ('bytes', String(a.bytes), String(b.bytes));
  } else {
    differ(
      'error',
      recorded.ok ? '(none)' : recorded.error.nomadMessage,
      replayed.ok ? '(none)' : map.backward(replayed.error.nomadMessage),
    );
  }
  return out;
}

/** A recorded answer as a run, for the agent's reading of it. */
function recordedRun(call: RecordedCall): PluginRun {
  return pluginRunOf({
    argv: call.argv,
    env: call.env,
    exitCode: call.signal ? null : call.exit,
    signal: (call.signal ?? null) as NodeJS.Signals | null,
    stdout: recordedBytes(call, 'stdout'),
    stderr: recordedBytes(call, 'stderr'),
    durationMs: call.duration_ms ?? 0,
  });
}

function exitOf(run: PluginRun): string {
  if (run.spawnError) return `not started (${run.spawnError.code ?? run.spawnError.message})`;
  if (run.timedOut) return `timed out (${run.signal ?? 'killed'})`;
  return run.signal ? `signal ${run.signal}` : `exit ${run.exitCode}`;
}

/** Output for a report: the text, or its bytes in base64 when it is not UTF-8. */
function shown(bytes: Buffer): string {
  const text = bytes.toString('utf8');
  return Buffer.from(text, 'utf8').equals(bytes) ? text : `base64:${bytes.toString('base64')}`;
}
