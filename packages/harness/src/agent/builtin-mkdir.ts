import { statSync } from 'node:fs';
import { chmod, chown, mkdir, rm } from 'node:fs/promises';
import {
  DEFAULT_VOLUME_MODE,
  parseModeParameter,
  parseOwnerParameter,
  volumePath,
  type CreateRequest,
  type DeleteRequest,
  type ParsedParameter,
} from '@dhv/sdk';
import { PluginError } from '@dhv/sdk/client';

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
  const out: MkdirParameters = { mode: DEFAULT_VOLUME_MODE };
  for (const [key, value] of Object.entries(parameters ?? {})) {
    if (key === 'mode') out.mode = parsed(parseModeParameter(value), fail);
    else if (key === 'uid' || key === 'gid') {
      const id = parsed(parseOwnerParameter(key, value), fail);
      if (id !== undefined) out[key] = id;
    } else throw fail(`unknown parameter ${JSON.stringify(key)} (mkdir takes mode, uid and gid)`);
  }
  return out;
}

function parsed<T>(result: ParsedParameter<T>, fail: (reason: string) => PluginError): T {
  if (!result.ok) throw fail(result.problem);
  return result.value;
}

function failure(operation: 'create' | 'delete', volumeId: string, reason: string): PluginError {
  return new PluginError('PLUGIN_FAILED', reason, { pluginId: 'mkdir', executable: BUILTIN_EXECUTABLE, operation, volumeId });
}
