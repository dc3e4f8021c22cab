import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { AGENT_TIMEOUT_MS } from '../protocol/operations.js';
import { execPlugin } from './exec-plugin.js';
import { PluginError } from './errors.js';
import { resolvePlugin } from './resolve-plugin.js';

/** Nomad's built-in plugin ID; a file of that name in the plugin directory is never used. */
export const BUILTIN_MKDIR_ID = 'mkdir';

export interface DiscoveredPlugin {
  id: string;
  executable: string;
  /** As the agent stores it in `plugins.host_volume.<id>.version`. */
  version: string;
  durationMs: number;
}

export interface SkippedPlugin {
  id: string;
  executable: string;
  reason: string;
  /** Set when the entry was a candidate whose fingerprint failed. */
  error?: PluginError;
}

export interface Discovery {
  plugins: DiscoveredPlugin[];
  skipped: SkippedPlugin[];
}

export interface DiscoverOptions {
  /** Per-plugin fingerprint budget; the agent's is 1 s. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/**
 * Lists the plugin directory as the agent does (entries that are not directories and
 * have an execute bit) and fingerprints every candidate concurrently. A failing, slow or
 * unparseable candidate is skipped with the reason; it never fails discovery.
 */
export async function discoverPlugins(pluginDir: string, options: DiscoverOptions = {}): Promise<Discovery> {
  let names: string[];
  try {
    names = (await readdir(pluginDir)).sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { plugins: [], skipped: [] };
    throw err;
  }
  const outcomes = await Promise.all(names.map((name) => fingerprintEntry(pluginDir, name, options)));
  return {
    plugins: outcomes.filter((o): o is DiscoveredPlugin => 'version' in o),
    skipped: outcomes.filter((o): o is SkippedPlugin => 'reason' in o && o.reason !== ''),
  };
}

async function fingerprintEntry(
  pluginDir: string,
  id: string,
  options: DiscoverOptions,
): Promise<DiscoveredPlugin | SkippedPlugin> {
  const executable = join(pluginDir, id);
  try {
    const info = await stat(executable);
    if (info.isDirectory()) return { id, executable, reason: '' }; // not a candidate
    if ((info.mode & 0o111) === 0) return { id, executable, reason: 'not executable (no execute bit), so not a plugin' };
  } catch {
    return { id, executable, reason: 'a broken symlink or unreadable entry' };
  }
  if (id === BUILTIN_MKDIR_ID) {
    return { id, executable, reason: 'shadowed by the built-in mkdir plugin; rename it (for example dhv-mkdir)' };
  }
  try {
    const resolved = await resolvePlugin(pluginDir, id);
    const result = await execPlugin(resolved, 'fingerprint', {}, {
      timeoutMs: options.timeoutMs ?? AGENT_TIMEOUT_MS.fingerprint,
      ...(options.signal ? { signal: options.signal } : {}),
      pluginId: id,
    });
    return { id, executable, version: result.version, durationMs: result.durationMs };
  } catch (err) {
    if (err instanceof PluginError) return { id, executable, reason: err.message, error: err };
    throw err;
  }
}
