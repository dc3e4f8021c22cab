import {
  BUILTIN_MKDIR_ID,
  discoverPlugins,
  execPlugin,
  resolvePlugin,
  type CreateRequest,
  type DeleteRequest,
  type SkippedPlugin,
} from '@dhv/sdk';
import { BUILTIN_EXECUTABLE, BUILTIN_MKDIR_VERSION, builtinMkdirCreate, builtinMkdirDelete } from './builtin-mkdir.js';

/** One plugin as the volume manager uses it: built in, or an executable in the plugin dir. */
export interface VolumePlugin {
  id: string;
  builtin: boolean;
  executable: string;
  create(request: CreateRequest, signal: AbortSignal): Promise<{ path: string; bytes: bigint }>;
  delete(request: DeleteRequest, signal: AbortSignal): Promise<void>;
}

export interface PluginFingerprint {
  id: string;
  version: string;
  builtin: boolean;
  executable: string;
}

export interface Fingerprint {
  plugins: PluginFingerprint[];
  skipped: Array<Pick<SkippedPlugin, 'id' | 'executable' | 'reason'>>;
  /** Node attributes `plugins.host_volume.<id>.version`. */
  attributes: Record<string, string>;
}

export function versionAttribute(pluginId: string): string {
  return `plugins.host_volume.${pluginId}.version`;
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
    ...discovery.plugins.map((p) => ({ id: p.id, version: p.version, builtin: false, executable: p.executable })),
  ];
  const attributes: Record<string, string> = {};
  for (const p of [...plugins].sort((a, b) => a.id.localeCompare(b.id))) attributes[versionAttribute(p.id)] = p.version;
  return {
    plugins,
    skipped: discovery.skipped.map(({ id, executable, reason }) => ({ id, executable, reason })),
    attributes,
  };
}

/**
 * Looks a plugin up for an operation the way the agent does: the built-in first, then a
 * file in the plugin directory (resolved inside it only). Throws the SDK's PluginError.
 */
export async function lookupPlugin(pluginDir: string, pluginId: string): Promise<VolumePlugin> {
  if (pluginId === BUILTIN_MKDIR_ID) {
    return {
      id: pluginId,
      builtin: true,
      executable: BUILTIN_EXECUTABLE,
      create: (request) => builtinMkdirCreate(request),
      delete: (request) => builtinMkdirDelete(request),
    };
  }
  const executable = await resolvePlugin(pluginDir, pluginId);
  return {
    id: pluginId,
    builtin: false,
    executable,
    async create(request, signal) {
      // Looked up again and run from the file checked, so a swapped-in symlink cannot run.
      const result = await execPlugin({ pluginDir, pluginId }, 'create', request, { signal });
      return { path: result.path, bytes: result.bytes };
    },
    async delete(request, signal) {
      await execPlugin({ pluginDir, pluginId }, 'delete', request, { signal });
    },
  };
}
