import { closeSync, fstatSync, lstatSync, openSync, readlinkSync, realpathSync, constants, type Stats } from 'node:fs';
import { isAbsolute, join, posix } from 'node:path';
import { pluginNotExecutable, pluginNotFound } from './errors.js';
import { O_PATH } from './exec-format.js';

/**
 * A plugin found the way the agent finds it, held open: `fd` names the very file that
 * was judged, so what runs is what was checked even if the directory changes meanwhile.
 */
export interface PluginHandle {
  pluginId: string;
  /** `<plugin dir>/<id>` as Go's filepath.Join writes it: the plugin's argv[0] and the name in errors. */
  executable: string;
  /** An O_PATH descriptor of the file judged; the caller closes it (closePluginHandle). */
  fd: number;
  info: Stats;
}

/** Linux follows at most 40 links in one lookup; Go's os.Root gives up at 255. */
const MAX_LINKS = 255;

/**
 * Looks a plugin ID up as Nomad does, through a root confined to the plugin directory
 * (Go's os.Root): any path inside works (`sub/p`, `./p`, a relative symlink that stays
 * inside), while an absolute symlink (even to a file inside), a link or `..` that leaves
 * the directory, a loop, or a missing file are `no such plugin: "<id>"`; a directory or a
 * file without an execute bit is `plugin not executable: "<id>"`.
 */
export function openPlugin(pluginDir: string, pluginId: string): PluginHandle {
  const executable = pluginDir === '' ? pluginId : join(pluginDir, pluginId);
  if (pluginDir === '' || !isAbsolute(pluginDir)) {
    throw pluginNotFound(pluginId, executable, [
      pluginDir === ''
        ? 'no plugin dir is configured'
        : `the plugin dir ${JSON.stringify(pluginDir)} is not an absolute path`,
    ]);
  }
  if (pluginId.includes('\0')) throw pluginNotFound(pluginId, executable, ['the plugin ID contains a NUL byte']);
  let root: string;
  try {
    root = realpathSync(pluginDir);
  } catch {
    throw pluginNotFound(pluginId, executable, [`the plugin dir ${pluginDir} does not exist`]);
  }
  const found = confinedPath(root, pluginId);
  if (typeof found !== 'string') throw pluginNotFound(pluginId, executable, [found.why]);
  let fd: number;
  try {
    fd = openSync(found, O_PATH | constants.O_NOFOLLOW);
  } catch {
    throw pluginNotFound(pluginId, executable, [`${executable} changed while it was looked up`]);
  }
  try {
    // What was opened, wherever the path led meanwhile, must lie inside the plugin dir.
    const opened = readlinkSync(`/proc/self/fd/${fd}`);
    if (opened !== root && !opened.startsWith(root.endsWith('/') ? root : `${root}/`)) {
      throw pluginNotFound(pluginId, executable, [
        `${executable} leads to ${opened}, outside the plugin dir ${pluginDir}`,
      ]);
    }
    const info = fstatSync(fd);
    // O_PATH|O_NOFOLLOW names a symlink itself: one swapped in after the walk.
    if (info.isSymbolicLink())
      throw pluginNotFound(pluginId, executable, [`${executable} changed while it was looked up`]);
    if (info.isDirectory()) throw pluginNotExecutable(pluginId, executable, [`${executable} is a directory`]);
    if ((info.mode & 0o111) === 0)
      throw pluginNotExecutable(pluginId, executable, [`${executable} has no execute bit (chmod +x it)`]);
    return { pluginId, executable, fd, info };
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}

export function closePluginHandle(handle: PluginHandle): void {
  try {
    closeSync(handle.fd);
  } catch {
    // already closed
  }
}

/**
 * Resolves `id` inside `root` one component at a time, following relative symlinks the way
 * os.Root does; returns the resolved path, or why it does not count as a plugin.
 */
function confinedPath(root: string, id: string): string | { why: string } {
  if (id === '') return { why: 'the plugin ID is empty' };
  if (isAbsolute(id)) return { why: `the plugin ID ${JSON.stringify(id)} is an absolute path` };
  const done: string[] = []; // components below root, all real directories (or the final file)
  const pending = id.split('/').reverse();
  let links = 0;
  let trailingSlash = id.endsWith('/');
  while (pending.length > 0) {
    const part = pending.pop()!;
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (done.length === 0) return { why: `${JSON.stringify(id)} leads out of the plugin dir` };
      done.pop();
      continue;
    }
    const here = posix.join(root, ...done, part);
    let info: Stats;
    try {
      info = lstatSync(here);
    } catch {
      return { why: `${here} does not exist` };
    }
    if (info.isSymbolicLink()) {
      if (++links > MAX_LINKS) return { why: `${here}: too many levels of symbolic links` };
      let target: string;
      try {
        target = readlinkSync(here);
      } catch {
        return { why: `${here} changed while it was looked up` };
      }
      if (isAbsolute(target))
        return { why: `${here} is a symlink to the absolute path ${target}: Nomad never follows those` };
      pending.push(...target.split('/').reverse());
      if (target.endsWith('/')) trailingSlash = true;
      continue;
    }
    if (pending.length > 0 || trailingSlash) {
      if (!info.isDirectory()) return { why: `${here} is not a directory` };
    }
    done.push(part);
  }
  return posix.join(root, ...done);
}

/**
 * The path a plugin ID names, checked as the agent checks it; kept for callers that run
 * the plugin by path. Running through execPlugin({pluginDir, pluginId}) instead keeps the
 * file that was checked.
 */
export async function resolvePlugin(pluginDir: string, pluginId: string): Promise<string> {
  const handle = openPlugin(pluginDir, pluginId);
  closePluginHandle(handle);
  return handle.executable;
}
