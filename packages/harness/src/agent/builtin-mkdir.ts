import { statSync } from 'node:fs';
import { chmod, chown, mkdir, rm } from 'node:fs/promises';
import { PluginError, volumePath, type CreateRequest, type DeleteRequest } from '@dhv/sdk';

/** The version Nomad's built-in mkdir plugin reports. */
export const BUILTIN_MKDIR_VERSION = '0.0.1';
export const BUILTIN_EXECUTABLE = '(built-in)';

export interface MkdirResult {
  path: string;
  bytes: bigint;
}

/**
 * Nomad's built-in `mkdir` plugin, in process as in the agent: `<volumes dir>/<id>`,
 * mode from the `mode` parameter (default 0700, umask ignored), optional `uid`/`gid`,
 * an existing path is success untouched, bytes always 0 (PROTOCOL.md, "The built-in
 * mkdir plugin").
 */
export async function builtinMkdirCreate(request: Pick<CreateRequest, 'volumesDir' | 'volumeId' | 'parameters'>): Promise<MkdirResult> {
  const fail = (reason: string) => failure('create', request.volumeId, reason);
  let path: string;
  try {
    path = volumePath(request.volumesDir, request.volumeId);
  } catch (err) {
    throw fail((err as Error).message);
  }
  const params = parseParameters(request.parameters, fail);
  try {
    // Synchronous on purpose: on restore this is the whole job for each of thousands of volumes,
    // and one stat costs less than a round trip through libuv's thread pool.
    statSync(path);
    return { path, bytes: 0n };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw fail((err as Error).message);
  }
  try {
    await mkdir(path, { mode: params.mode });
    await chmod(path, params.mode); // mkdir applies the umask; the parameter is meant exactly
  } catch (err) {
    throw fail((err as Error).message);
  }
  if (params.uid !== undefined || params.gid !== undefined) {
    try {
      await chown(path, params.uid ?? -1, params.gid ?? -1);
    } catch (err) {
      await rm(path, { recursive: true, force: true }); // Nomad once leaked the directory here
      throw fail((err as Error).message);
    }
  }
  return { path, bytes: 0n };
}

export async function builtinMkdirDelete(request: Pick<DeleteRequest, 'volumesDir' | 'volumeId'>): Promise<void> {
  try {
    await rm(volumePath(request.volumesDir, request.volumeId), { recursive: true, force: true });
  } catch (err) {
    throw failure('delete', request.volumeId, (err as Error).message);
  }
}

interface MkdirParameters {
  mode: number;
  uid?: number;
  gid?: number;
}

function parseParameters(parameters: Record<string, string> | null, fail: (reason: string) => PluginError): MkdirParameters {
  const out: MkdirParameters = { mode: 0o700 };
  for (const [key, value] of Object.entries(parameters ?? {})) {
    switch (key) {
      case 'mode':
        if (!/^0?[0-7]{1,4}$/.test(value)) throw fail(`invalid mode ${JSON.stringify(value)}: must be an octal number like "0755"`);
        out.mode = parseInt(value, 8);
        break;
      case 'uid':
      case 'gid': {
        if (!/^[0-9]+$/.test(value)) throw fail(`invalid ${key} ${JSON.stringify(value)}: must be a whole number`);
        out[key] = Number(value);
        break;
      }
      default:
        throw fail(`unknown parameter ${JSON.stringify(key)} (mkdir takes mode, uid and gid)`);
    }
  }
  return out;
}

function failure(operation: 'create' | 'delete', volumeId: string, reason: string): PluginError {
  return new PluginError('PLUGIN_FAILED', reason, { pluginId: 'mkdir', executable: BUILTIN_EXECUTABLE, operation, volumeId });
}
