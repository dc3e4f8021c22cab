import { accessSync, constants, readdirSync, realpathSync, statSync } from 'node:fs';
import { chmod, chown, rm } from 'node:fs/promises';
import { isAbsolute } from 'node:path';
import type { CreateRequest, DeleteRequest } from '@dhv/sdk';
import { PluginError, type ResponseAnswer } from '@dhv/sdk/client';
import { readMountTable } from '@dhv/sdk/host';
import { GoPathError, goClean, goJoin, goMkdirAll, goRemoveAll } from '../go/os.js';
import { goQuote, goSyscallMode } from '@dhv/sdk/client';
import { DEFAULT_VOLUME_MODE, readMkdirParameter } from '@dhv/sdk/plugin';

/** The version Nomad's built-in mkdir plugin reports. */
export const BUILTIN_MKDIR_VERSION = '0.0.1';
export const BUILTIN_EXECUTABLE = '(built-in)';

/** (uid_t)-1: chown leaves the owner as it is. */
const KEEP_OWNER = 0xffffffff;

/**
 * Nomad's built-in `mkdir` plugin, in process as in the agent, step for step as its code
 * runs (PROTOCOL.md, "The built-in mkdir plugin"; cases in vectors/nomad-agent/builtin-mkdir.json):
 * the path is `filepath.Join(volumes dir, id)` (so `""` is the volumes dir and `../x`
 * leaves it); a path that exists, whatever it is, is success before parameters are read;
 * then the parameters; then MkdirAll (parents get the mode less the umask), an explicit
 * chmod, and chown. Errors carry Go's texts and no prefix. Bytes are always 0.
 */
export async function builtinMkdirCreate(
  request: Pick<CreateRequest, 'volumesDir' | 'volumeId' | 'parameters'>,
): Promise<ResponseAnswer['create']> {
  const fail = (reason: string) => failure('create', request.volumeId, reason);
  const path = goJoin(request.volumesDir, request.volumeId);
  const found = existing(path);
  if (found === true) return { path, bytes: 0n };
  if (found instanceof GoPathError) throw fail(found.message);
  const params = parseParameters(request.parameters);
  if (typeof params === 'string') throw fail(params);
  try {
    await goMkdirAll(path, params.mode);
  } catch (err) {
    throw fail(`error creating directory: ${(err as Error).message}`);
  }
  try {
    await chmod(path, goSyscallMode(params.mode));
  } catch (err) {
    throw fail(`error setting directory mode: ${GoPathError.from('chmod', path, err).message}`);
  }
  if (params.uid !== KEEP_OWNER || params.gid !== KEEP_OWNER) {
    try {
      await chown(path, params.uid, params.gid);
    } catch (err) {
      await rm(path, { recursive: true, force: true }); // Nomad once leaked the directory here
      throw fail(`error changing owner/group: ${GoPathError.from('chown', path, err).message}`);
    }
  }
  return { path, bytes: 0n };
}

/** Removes `filepath.Join(volumes dir, id)` and everything in it; a missing path is success. */
export async function builtinMkdirDelete(request: Pick<DeleteRequest, 'volumesDir' | 'volumeId'>): Promise<void> {
  try {
    await goRemoveAll(goJoin(request.volumesDir, request.volumeId));
  } catch (err) {
    throw failure('delete', request.volumeId, (err as Error).message);
  }
}

/**
 * Go's `os.Stat` of the path: true when something is there, false when nothing is, the
 * error otherwise. Synchronous on purpose: on restore this is the whole job for each of
 * thousands of volumes, and one stat costs less than a round trip through libuv's pool.
 */
function existing(path: string): boolean | GoPathError {
  if (path.includes('\0')) return new GoPathError('stat', path, 'EINVAL');
  try {
    statSync(path);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'ENOENT' ? false : GoPathError.from('stat', path, err);
  }
}

/** Linux's PATH_MAX: a longer path fails its stat with ENAMETOOLONG. */
const PATH_MAX = 4096;

/**
 * The built-in create's first step (a path that exists is success, before anything else is
 * read) for many volumes at once, as a restore asks it: the path each create would return
 * at once, or undefined for a create that has more to do (its path is absent, or its stat
 * fails). Most are answered from one readdir of the volumes dir instead of a stat each,
 * which is most of what a restore of 10,000 built-in volumes costs: an entry listed there
 * whose stat cannot fail (not a symbolic link, which its stat follows; not a mount point,
 * whose stat asks the filesystem mounted there; in a volumes dir this process may search).
 * Any other is stat'ed as its create would.
 */
export async function existingVolumePaths(volumesDir: string): Promise<(volumeId: string) => string | undefined> {
  const byStat = (volumeId: string) => {
    const path = goJoin(volumesDir, volumeId);
    return existing(path) === true ? path : undefined;
  };
  const dir = goClean(volumesDir);
  if (!isAbsolute(dir) || dir.includes('\0')) return byStat;
  const present = new Set<string>();
  try {
    accessSync(dir, constants.X_OK);
    for (const entry of readdirSync(dir, { withFileTypes: true })) if (!entry.isSymbolicLink()) present.add(entry.name);
    const real = realpathSync(dir);
    for (const m of await readMountTable()) {
      const slash = m.mountPoint.lastIndexOf('/');
      if ((slash === 0 ? '/' : m.mountPoint.slice(0, slash)) === real) present.delete(m.mountPoint.slice(slash + 1));
    }
  } catch {
    return byStat;
  }
  const prefix = dir === '/' ? '/' : `${dir}/`;
  const prefixBytes = Buffer.byteLength(prefix);
  return (volumeId) =>
    present.has(volumeId) && prefixBytes + Buffer.byteLength(volumeId) < PATH_MAX
      ? `${prefix}${volumeId}`
      : byStat(volumeId);
}

interface MkdirParameters {
  /** A Go `os.FileMode`: permission bits, and setuid/setgid/sticky only as Go's own high bits. */
  mode: number;
  /** As the kernel reads it: 32 bits, 0xffffffff for "leave as is". */
  uid: number;
  gid: number;
}

/** Nomad's parameter decoding: `mode`, `uid` and `gid` as the SDK reads them, anything else refused; the first bad one met is the error. */
function parseParameters(parameters: Record<string, string> | null): MkdirParameters | string {
  const out: MkdirParameters = { mode: DEFAULT_VOLUME_MODE, uid: KEEP_OWNER, gid: KEEP_OWNER };
  for (const [key, value] of Object.entries(parameters ?? {})) {
    if (key !== 'mode' && key !== 'uid' && key !== 'gid') {
      return `invalid value for ${goQuote(key)}: unknown mkdir parameter: ${goQuote(key)}`;
    }
    const read = readMkdirParameter(key, value);
    if (!read.ok) return read.error;
    out[key] = read.value;
  }
  return out;
}

/** A PluginError whose message is Nomad's for the built-in: the reason alone, with no `error creating volume ...` prefix. */
export class BuiltinMkdirError extends PluginError {
  constructor(operation: 'create' | 'delete', volumeId: string, reason: string) {
    super('PLUGIN_FAILED', reason, { pluginId: 'mkdir', executable: BUILTIN_EXECUTABLE, operation, volumeId });
    this.message = reason;
  }
}

function failure(operation: 'create' | 'delete', volumeId: string, reason: string): PluginError {
  return new BuiltinMkdirError(operation, volumeId, reason);
}
