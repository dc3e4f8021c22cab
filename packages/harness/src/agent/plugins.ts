import { BUILTIN_MKDIR_ID, type Discovery, type PluginRunner, type SkippedPlugin } from '@dhv/sdk/client';
import { processRunner } from '../runner/process-runner.js';
import { builtinMkdirRunner } from './builtin-mkdir-runner.js';

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

/**
 * The agent's runner: the built-in mkdir first (a file named `mkdir` in the plugin dir
 * never replaces it), every other plugin through `external` (by default as a process;
 * a test hands in a fake).
 */
export function builtinFirst(external: PluginRunner = processRunner): PluginRunner {
  const pick = (pluginId: string) => (isBuiltinPlugin(pluginId) ? builtinMkdirRunner : external);
  return {
    run: (operation, call) =>
      (typeof call.plugin === 'string' ? external : pick(call.plugin.pluginId)).run(operation, call),
    lookup: (pluginDir, pluginId) => pick(pluginId).lookup(pluginDir, pluginId),
    async discover(pluginDir, options) {
      const [builtin, found] = await Promise.all([
        builtinMkdirRunner.discover(pluginDir, options),
        external.discover(pluginDir, options),
      ]);
      return { ...found, plugins: [...builtin.plugins, ...found.plugins.filter((p) => !isBuiltinPlugin(p.id))] };
    },
  };
}

/**
 * Discovers plugins as the agent does (every candidate fingerprinted concurrently within
 * 1 s, failures skipped with the reason); through `builtinFirst`, the built-in mkdir is
 * always there.
 */
export async function fingerprintPlugins(
  runner: PluginRunner,
  pluginDir: string,
  signal?: AbortSignal,
): Promise<Fingerprint> {
  const discovery = await runner.discover(pluginDir, { signal });
  const plugins: PluginFingerprint[] = discovery.plugins.map(({ id, version, executable, stderr, warnings }) =>
    isBuiltinPlugin(id)
      ? { id, version, builtin: true, executable }
      : { id, version, builtin: false, executable, stderr, warnings },
  );
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
