import { lstat, readdir } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { AGENT_TIMEOUT_MS } from '../protocol/operations.js';
import { goErrnoText } from '../go/errno.js';
import { callPlugin } from './plugin-call.js';
import { fingerprintRequest } from './agent-requests.js';
import { valueWithRun } from './run-result.js';
import { PluginError } from './errors.js';
import { manyStartedAtOnceHint } from './machine-load.js';
import { writableByOthers } from './plugin-trust.js';

/** Nomad's built-in plugin ID; a file of that name in the plugin directory is run, but never used. */
export const BUILTIN_MKDIR_ID = 'mkdir';

export interface DiscoveredPlugin {
  id: string;
  executable: string;
  /** As the agent stores it in `plugins.host_volume.<id>.version`. */
  version: string;
  durationMs: number;
  /** What the plugin wrote to stderr while it was fingerprinted (a real agent reads and drops it). */
  stderr: string;
  /** What dhv noticed that a real agent would not say. */
  warnings: string[];
}

/** A log line as the agent writes it (hclog): level, message and the `error` field. */
export interface AgentLogLine {
  level: 'debug' | 'warn' | 'error';
  message: string;
  error?: string;
  dir?: string;
}

export interface SkippedPlugin {
  id: string;
  executable: string;
  /** Nomad's error first; what dhv adds on the following lines. */
  reason: string;
  /** The line a real agent logs for this plugin; absent where it logs nothing (the shadowed `mkdir`). */
  logged?: AgentLogLine;
  /** What the plugin wrote to stderr, where it ran. */
  stderr?: string;
  /** Set when the entry was a candidate whose lookup or fingerprint failed. */
  error?: PluginError;
}

export interface Discovery {
  plugins: DiscoveredPlugin[];
  skipped: SkippedPlugin[];
  /** Lines a real agent logs about the plugin dir itself. */
  logs: AgentLogLine[];
  /** What dhv says that a real agent would not: the plugin dir or a plugin writable by another user. */
  warnings?: string[];
  /**
   * Set when a real agent's discovery panics on what a plugin printed (its fingerprint has
   * no version): the agent process dies and publishes nothing. dhv skips that plugin instead.
   */
  nomadCrash?: { pluginId: string; panic: string };
}

export interface DiscoverOptions {
  /** Per-plugin fingerprint budget; the agent's is 1 s. */
  timeoutMs?: number;
  signal?: AbortSignal;
  cwd?: string;
}

/**
 * Lists the plugin directory as the agent does (entries that are not directories and have
 * an execute bit, judged without following links: every symlink is a candidate) and
 * fingerprints every candidate at once. A candidate that cannot be looked up, fails, is
 * slow or prints something unparseable is skipped with the agent's log line; nothing in
 * the directory (a FIFO, a socket, a looping #! line) can hang or stop discovery.
 */
export async function discoverPlugins(pluginDir: string, options: DiscoverOptions = {}): Promise<Discovery> {
  const logs: AgentLogLine[] = [];
  if (pluginDir === '') return { plugins: [], skipped: [], logs };
  let names: string[];
  try {
    names = (await readdir(pluginDir)).sort();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') logs.push({ level: 'debug', message: 'plugin dir does not exist', dir: pluginDir });
    else
      logs.push({
        level: 'warn',
        message: 'error finding plugins',
        dir: pluginDir,
        error: `readdirent ${pluginDir}: ${code === 'ENOTDIR' ? goErrnoText(code) : (err as Error).message}`,
      });
    return { plugins: [], skipped: [], logs };
  }
  const candidates: string[] = [];
  for (const name of names) {
    try {
      const info = await lstat(join(pluginDir, name));
      if (!info.isDirectory() && (info.mode & 0o111) !== 0) candidates.push(name);
    } catch {
      // vanished since the listing
    }
  }
  const loaded = candidates.length > availableParallelism() * 4;
  const outcomes = await Promise.all(
    candidates.map((name) => fingerprintEntry(pluginDir, name, options, loaded ? candidates.length : 0)),
  );
  const discovery: Discovery = {
    plugins: outcomes.filter((o): o is DiscoveredPlugin => 'version' in o),
    skipped: outcomes.filter((o): o is SkippedPlugin => 'reason' in o),
    logs,
  };
  const warnings = await writableByOthers([pluginDir, ...candidates.map((name) => join(pluginDir, name))]);
  if (warnings.length > 0) discovery.warnings = warnings;
  const crasher = discovery.skipped.find((s) => s.error?.nomadPanic !== undefined);
  if (crasher) discovery.nomadCrash = { pluginId: crasher.id, panic: crasher.error!.nomadPanic! };
  return discovery;
}

async function fingerprintEntry(
  pluginDir: string,
  id: string,
  options: DiscoverOptions,
  startedAtOnce: number,
): Promise<DiscoveredPlugin | SkippedPlugin> {
  const executable = join(pluginDir, id);
  try {
    const result = valueWithRun(
      await callPlugin('fingerprint', {
        plugin: { pluginDir, pluginId: id },
        request: fingerprintRequest(),
        timeoutMs: options.timeoutMs ?? AGENT_TIMEOUT_MS.fingerprint,
        signal: options.signal,
        cwd: options.cwd,
      }),
    );
    if (id === BUILTIN_MKDIR_ID) return shadowed(executable);
    return {
      id,
      executable,
      version: result.version,
      durationMs: result.durationMs,
      stderr: result.stderr,
      warnings: result.warnings,
    };
  } catch (err) {
    if (!(err instanceof PluginError)) throw err;
    if (id === BUILTIN_MKDIR_ID) return shadowed(executable);
    const hints = [...err.hints];
    if (err.code === 'PLUGIN_TIMED_OUT' && startedAtOnce > 0) {
      hints.push(manyStartedAtOnceHint(startedAtOnce));
    }
    const reason = [err.nomadMessage, ...hints].join('\n');
    const logged: AgentLogLine =
      err.operation === 'resolve'
        ? { level: 'warn', message: 'error getting plugin', error: err.nomadMessage }
        : err.runError !== undefined
          ? { level: 'error', message: 'error running plugin', error: err.runError }
          : { level: 'error', message: 'error parsing plugin output', error: err.nomadMessage };
    return { id, executable, reason, logged, ...(err.stderr !== '' ? { stderr: err.stderr } : {}), error: err };
  }
}

function shadowed(executable: string): SkippedPlugin {
  return {
    id: BUILTIN_MKDIR_ID,
    executable,
    reason:
      'a file named mkdir is fingerprinted, but the built-in mkdir plugin is what the node publishes; rename it (for example dhv-mkdir)',
  };
}
