import { realpath, stat } from 'node:fs/promises';
import { isAbsolute, join, sep } from 'node:path';
import { PluginError, pluginNotFound } from './errors.js';

/**
 * Finds a plugin the way the agent does: a file named by the plugin ID directly inside
 * the plugin directory. An ID that would leave the directory (`..`, a `/`, a symlink
 * resolving outside it) is "no such plugin", so nothing outside is ever executed
 * (CVE-2026-7474).
 */
export async function resolvePlugin(pluginDir: string, pluginId: string): Promise<string> {
  if (!isAbsolute(pluginDir)) throw new TypeError(`plugin directory must be an absolute path, got ${JSON.stringify(pluginDir)}`);
  const candidate = join(pluginDir, pluginId);
  if (pluginId === '' || pluginId === '.' || pluginId === '..' || pluginId.includes('/') || pluginId.includes('\0')) {
    throw pluginNotFound(pluginId, candidate, `plugin ID ${JSON.stringify(pluginId)} is not a file name in ${pluginDir}`);
  }
  let realDir: string;
  let realFile: string;
  try {
    realDir = await realpath(pluginDir);
    realFile = await realpath(candidate);
  } catch {
    throw pluginNotFound(pluginId, candidate, `${candidate} does not exist`);
  }
  if (!realFile.startsWith(realDir + sep)) {
    throw pluginNotFound(pluginId, candidate, `${candidate} resolves to ${realFile}, outside ${pluginDir}`);
  }
  const info = await stat(realFile);
  if (info.isDirectory() || (info.mode & 0o111) === 0) {
    throw new PluginError('PLUGIN_NOT_EXECUTABLE', `plugin is not executable: ${candidate}${info.isDirectory() ? ' is a directory' : ' has no execute bit (chmod +x it)'}`, {
      pluginId,
      executable: candidate,
      operation: 'resolve',
    });
  }
  return candidate;
}
