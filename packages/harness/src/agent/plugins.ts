import { AGENT_TIMEOUT_MS, type CreateRequest, type DeleteRequest } from '@dhv/sdk';
import {
  BUILTIN_MKDIR_ID,
  discoverPlugins,
  execPlugin,
  resolvePlugin,
  type Discovery,
  type SkippedPlugin,
} from '@dhv/sdk/client';
import { BUILTIN_EXECUTABLE, BUILTIN_MKDIR_VERSION, builtinMkdirCreate, builtinMkdirDelete } from './builtin-mkdir.js';

/**
 * The one place that decides whether a plugin ID is the built-in mkdir or a file in the
 * plugin directory: the agent looks the built-in up first, and a file named `mkdir` never
 * replaces it.
 */
export function isBuiltinPlugin(pluginId: string): boolean {
  return pluginId === BUILTIN_MKDIR_ID;
}

export interface PluginFingerprint {
  id: string;
  version: string;
  builtin: boolean;
  executable: string;
  /** What a plugin run as a process wrote to stderr while it was fingerprinted. */
  stderr?: string;
  /** What dhv noticed that a real agent would not say (a helper killed at the deadline). */
  warnings?: string[];
}

export interface Fingerprint {
  plugins: PluginFingerprint[];
  /** With the line a real agent logs for each, and what the plugin wrote to stderr. */
  skipped: Array<Pick<SkippedPlugin, 'id' | 'executable' | 'reason' | 'logged' | 'stderr'>>;
  /** Node attributes `plugins.host_volume.<id>.version`. */
  attributes: Record<string, string>;
  /** Lines a real agent logs about the plugin dir itself (it does not exist, it cannot be read). */
  logs?: Discovery['logs'];
  /** Where a real agent's discovery panics (a fingerprint without a version) and publishes nothing. */
  nomadCrash?: Discovery['nomadCrash'];
  /** The plugin dir or a plugin that a user other than the agent's can write. */
  warnings?: string[];
}

export function versionAttribute(pluginId: string): string {
  return `plugins.host_volume.${pluginId}.version`;
}

export interface RunOptions {
  signal?: AbortSignal | undefined;
  /** Defaults to the agent's 60 s. */
  timeoutMs?: number | undefined;
}

/**
 * How the agent runs plugins, handed to it as a dependency (as CNI's `invoke` is): the
 * real one looks the plugin up and runs its process through the SDK client; a test can
 * hand in a fake and exercise the agent's rules in process. Each method throws what the
 * SDK client throws (a PluginError with the agent's message).
 */
export interface PluginRunner {
  /** Discovery at start or reload: every candidate fingerprinted, the built-in added. */
  discover(pluginDir: string, options?: RunOptions): Promise<Fingerprint>;
  /** Finds the plugin (the built-in first) without running it: its executable, or the agent's lookup error. */
  lookup(pluginDir: string, pluginId: string): Promise<string>;
  create(
    pluginDir: string,
    pluginId: string,
    request: CreateRequest,
    options?: RunOptions,
  ): Promise<{ path: string; bytes: bigint }>;
  delete(pluginDir: string, pluginId: string, request: DeleteRequest, options?: RunOptions): Promise<void>;
}

/** The real runner: the built-in mkdir in process, every other plugin as a process through the SDK client. */
export const processPluginRunner: PluginRunner = {
  discover: (pluginDir, options = {}) => fingerprintPlugins(pluginDir, options.signal),
  lookup: (pluginDir, pluginId) => pluginExecutable(pluginDir, pluginId),
  async create(pluginDir, pluginId, request, options = {}) {
    if (isBuiltinPlugin(pluginId)) return builtinMkdirCreate(request);
    // Looked up and run from the one file checked, so a symlink swapped in meanwhile cannot run.
    const result = await execPlugin({ pluginDir, pluginId }, 'create', request, execOptions(pluginId, options));
    return { path: result.path, bytes: result.bytes };
  },
  async delete(pluginDir, pluginId, request, options = {}) {
    if (isBuiltinPlugin(pluginId)) return builtinMkdirDelete(request);
    await execPlugin({ pluginDir, pluginId }, 'delete', request, execOptions(pluginId, options));
  },
};

function execOptions(pluginId: string, options: RunOptions) {
  return {
    pluginId,
    timeoutMs: options.timeoutMs ?? AGENT_TIMEOUT_MS.create,
    ...(options.signal ? { signal: options.signal } : {}),
  };
}

/**
 * Discovers plugins as the agent does (every candidate fingerprinted concurrently within
 * 1 s, failures skipped with the reason) and adds the built-in mkdir, which is always
 * present and never shadowed by a file of that name.
 */
export async function fingerprintPlugins(pluginDir: string, signal?: AbortSignal): Promise<Fingerprint> {
  const discovery = await discoverPlugins(pluginDir, signal ? { signal } : {});
  const plugins: PluginFingerprint[] = [
    { id: BUILTIN_MKDIR_ID, version: BUILTIN_MKDIR_VERSION, builtin: true, executable: BUILTIN_EXECUTABLE },
    ...discovery.plugins
      .filter((p) => !isBuiltinPlugin(p.id))
      .map(({ id, version, executable, stderr, warnings }) => ({
        id,
        version,
        builtin: false,
        executable,
        stderr,
        warnings,
      })),
  ];
  const attributes: Record<string, string> = {};
  for (const p of [...plugins].sort((a, b) => a.id.localeCompare(b.id))) attributes[versionAttribute(p.id)] = p.version;
  return {
    plugins,
    skipped: discovery.skipped.map(({ id, executable, reason, logged, stderr }) => ({
      id,
      executable,
      reason,
      ...(logged ? { logged } : {}),
      ...(stderr !== undefined ? { stderr } : {}),
    })),
    attributes,
    logs: discovery.logs,
    ...(discovery.nomadCrash ? { nomadCrash: discovery.nomadCrash } : {}),
    ...(discovery.warnings ? { warnings: discovery.warnings } : {}),
  };
}

/** The executable a plugin ID runs, for messages: the built-in's marker, or the file in the plugin dir. */
export async function pluginExecutable(pluginDir: string, pluginId: string): Promise<string> {
  return isBuiltinPlugin(pluginId) ? BUILTIN_EXECUTABLE : resolvePlugin(pluginDir, pluginId);
}
