import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { chmod, chown, link, lstat, mkdir, open, readFile, rename, rmdir, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { z } from 'zod';
import { replaceFile } from '@dhv/sdk/host';
import { DhvError } from '../errors/dhv-error.js';
import { RECORDER_MARK, recorderSource } from './recorder-program.js';

/**
 * Where `dhv record` keeps what it moved, beside the plugin and on the same file system
 * (so every move is a rename): `<plugin dir>/.dhv-record/<plugin id>/`, a folder, which an
 * agent's plugin discovery skips. In it: the original plugin (a hard link, the same inode:
 * bytes, mode, owner and times untouched), `state.json`, and the log by default.
 */
export const RECORD_DIR = '.dhv-record';

const stateSchema = z.object({
  format: z.literal(1),
  pluginId: z.string(),
  pluginPath: z.string(),
  original: z.object({
    path: z.string(),
    dev: z.number(),
    ino: z.number(),
    mode: z.number(),
    uid: z.number(),
    gid: z.number(),
    size: z.number(),
    sha256: z.string(),
  }),
  recorder: z.object({ sha256: z.string() }),
  log: z.string(),
  since: z.string(),
});
type RecordState = z.infer<typeof stateSchema>;

export class RecordError extends DhvError {
  constructor(
    message: string,
    readonly code: string,
    details: Record<string, unknown> = {},
  ) {
    super(message, details);
  }
}

export interface RecordPaths {
  pluginId: string;
  pluginPath: string;
  folder: string;
  original: string;
  state: string;
  recorderTemp: string;
  defaultLog: string;
}

/** The plugin named by a path (anything with a `/`) or by its ID in `pluginDir`. */
export function recordPaths(plugin: string, pluginDir: string | undefined): RecordPaths {
  let pluginPath: string;
  if (plugin.includes('/')) pluginPath = resolve(plugin);
  else if (pluginDir !== undefined) pluginPath = resolve(pluginDir, plugin);
  else
    throw new RecordError(
      `plugin ${JSON.stringify(plugin)}: a plugin ID needs the client's plugin dir\n` +
        'Give --plugin-dir (host_volume_plugin_dir in the client block, by default <data_dir>/host_volume_plugins) or the path of the plugin.',
      'RECORD_NO_PLUGIN_DIR',
    );
  if (/[\n\r\0]/.test(pluginPath))
    throw new RecordError(`${JSON.stringify(pluginPath)}: a path on one line is needed`, 'RECORD_BAD_PATH');
  const pluginId = basename(pluginPath);
  const folder = join(dirname(pluginPath), RECORD_DIR, pluginId);
  return {
    pluginId,
    pluginPath,
    folder,
    // The original keeps its file name, so a script reading `basename $0` sees its ID.
    original: join(folder, pluginId),
    state: join(folder, 'state.json'),
    recorderTemp: join(folder, 'recorder.tmp'),
    defaultLog: join(folder, 'calls.jsonl'),
  };
}

export interface InstallResult {
  pluginId: string;
  pluginPath: string;
  original: string;
  log: string;
  /** False when the host has no setpriv with --pdeathsig: a recorder killed alone leaves the plugin running. */
  pluginDiesWithRecorder: boolean;
  /** What an interrupted earlier `dhv record` had left and this one cleared first. */
  cleared: string[];
}

/**
 * Puts the recorder in front of the plugin. The order keeps the plugin whole at every
 * instant, whatever kills dhv: the original is first linked into the record folder (two
 * names, one file), the state is written, and only then does one rename put the recorder
 * at the plugin's path. Until that rename the agent runs the plugin itself.
 */
export async function installRecorder(
  paths: RecordPaths,
  options: { log?: string | undefined; node: string },
): Promise<InstallResult> {
  const cleared = await clearInterrupted(paths, 'record');
  const info = await lstat(paths.pluginPath).catch((err: NodeJS.ErrnoException) => {
    throw new RecordError(`no plugin at ${paths.pluginPath}: ${err.code ?? err.message}`, 'RECORD_NO_PLUGIN', {
      path: paths.pluginPath,
    });
  });
  if (info.isSymbolicLink())
    throw new RecordError(
      `${paths.pluginPath} is a symbolic link; record the file it points to, or replace the link by the file`,
      'RECORD_SYMLINK',
      { path: paths.pluginPath },
    );
  if (!info.isFile() || (info.mode & 0o111) === 0)
    throw new RecordError(
      `${paths.pluginPath} is not an executable file, so no agent runs it as a plugin`,
      'RECORD_NOT_PLUGIN',
      {
        path: paths.pluginPath,
      },
    );
  const content = await readFile(paths.pluginPath);
  if (content.includes(RECORDER_MARK))
    throw new RecordError(
      `${paths.pluginPath} is already a dhv recorder, but ${paths.state} is missing, so where its plugin is kept is unknown\n` +
        "Put the plugin back at that path by hand (its file is named in the recorder's second line).",
      'RECORD_STATE_MISSING',
      { path: paths.pluginPath },
    );

  const log = resolve(options.log ?? paths.defaultLog);
  await mkdir(paths.folder, { recursive: true, mode: 0o700 });
  await link(paths.pluginPath, paths.original);
  const setpriv = await findSetpriv();
  const source = recorderSource(options.node, {
    pluginId: paths.pluginId,
    pluginPath: paths.pluginPath,
    original: paths.original,
    log,
    setpriv,
  });
  const state: RecordState = {
    format: 1,
    pluginId: paths.pluginId,
    pluginPath: paths.pluginPath,
    original: {
      path: paths.original,
      dev: info.dev,
      ino: info.ino,
      mode: info.mode,
      uid: info.uid,
      gid: info.gid,
      size: info.size,
      sha256: sha256(content),
    },
    recorder: { sha256: sha256(Buffer.from(source)) },
    log,
    since: new Date().toISOString(),
  };
  await replaceFile(paths.state, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600, durable: true });
  await replaceFile(paths.recorderTemp, source, { mode: info.mode & 0o7777, durable: true });
  await chmod(paths.recorderTemp, info.mode & 0o7777);
  await chown(paths.recorderTemp, info.uid, info.gid).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPERM') throw err; // not root: the recorder is ours, as the plugin was
  });
  await rename(paths.recorderTemp, paths.pluginPath);
  await syncDir(dirname(paths.pluginPath));
  return {
    pluginId: paths.pluginId,
    pluginPath: paths.pluginPath,
    original: paths.original,
    log,
    pluginDiesWithRecorder: setpriv !== null,
    cleared,
  };
}

export interface RemoveResult {
  pluginId: string;
  pluginPath: string;
  /** The log, which stays where it is. */
  log: string | undefined;
  /** `restored`, or what an interrupted `dhv record` / `--remove` had left and this run finished. */
  outcome: 'restored' | 'finished-interrupted' | 'not-recording';
  cleared: string[];
}

/**
 * Puts the plugin back with one rename over the recorder: the same file as before
 * (bytes, mode, owner, times). Refuses, touching nothing, when what is there is not what
 * `dhv record` left: the recorder changed (a new plugin installed over it, say) or the
 * kept plugin changed.
 */
export async function removeRecorder(paths: RecordPaths): Promise<RemoveResult> {
  const base = { pluginId: paths.pluginId, pluginPath: paths.pluginPath };
  const state = await readState(paths);
  if (state === undefined) {
    const cleared = await clearInterrupted(paths, 'remove');
    return { ...base, log: undefined, outcome: cleared.length > 0 ? 'finished-interrupted' : 'not-recording', cleared };
  }
  const atPath = await lstat(paths.pluginPath).catch(() => undefined);
  const kept = await lstat(paths.original).catch(() => undefined);
  if (kept === undefined && atPath !== undefined && sameFile(atPath, state.original)) {
    // A --remove killed after its rename: the plugin is back, only the state is left.
    await tidy(paths);
    return { ...base, log: state.log, outcome: 'finished-interrupted', cleared: [paths.state] };
  }
  const problems: string[] = [];
  if (kept === undefined) problems.push(`the plugin kept at ${paths.original} is missing`);
  else if (!sameFile(kept, state.original) || !(await hasDigest(paths.original, state.original.sha256)))
    problems.push(
      `the plugin kept at ${paths.original} is not the file dhv record kept (changed since ${state.since})`,
    );
  else if (kept.mode !== state.original.mode || kept.uid !== state.original.uid || kept.gid !== state.original.gid)
    problems.push(`the plugin kept at ${paths.original} has another mode or owner than when it was recorded`);
  if (atPath !== undefined && kept !== undefined && sameFile(atPath, state.original)) {
    // A `dhv record` killed before its last rename: the plugin never left its path.
    await unlink(paths.original);
    await tidy(paths);
    return { ...base, log: state.log, outcome: 'finished-interrupted', cleared: [paths.original, paths.state] };
  }
  if (atPath === undefined) problems.push(`${paths.pluginPath} is missing`);
  else if (!atPath.isFile() || !(await hasDigest(paths.pluginPath, state.recorder.sha256)))
    problems.push(
      `${paths.pluginPath} is no longer the recorder dhv record put there (something replaced it since ${state.since})`,
    );
  if (problems.length > 0)
    throw new RecordError(
      `not restoring ${paths.pluginPath}: ${problems.join('; ')}\n` +
        `Nothing was changed. Decide by hand which file belongs at ${paths.pluginPath}; the record folder is ${paths.folder}.`,
      'RECORD_STATE_CHANGED',
      { path: paths.pluginPath, problems },
    );
  await rename(paths.original, paths.pluginPath);
  await syncDir(dirname(paths.pluginPath));
  await tidy(paths);
  return { ...base, log: state.log, outcome: 'restored', cleared: [] };
}

/**
 * What an earlier run killed half-way left, when it left the plugin itself at its path:
 * a link to it in the record folder (and perhaps its state and a recorder not yet moved).
 * Anything else there is refused: it may be the only copy of a plugin.
 */
async function clearInterrupted(paths: RecordPaths, by: 'record' | 'remove'): Promise<string[]> {
  const state = await readState(paths);
  const atPath = await lstat(paths.pluginPath).catch(() => undefined);
  const kept = await lstat(paths.original).catch(() => undefined);
  if (state !== undefined && kept !== undefined && atPath !== undefined && !sameFile(atPath, kept))
    throw new RecordError(
      `${paths.pluginPath} is already being recorded (since ${state.since}, into ${state.log})\n` +
        `Run \`dhv record --remove ${paths.pluginPath}\` first.`,
      'RECORD_ALREADY',
      { path: paths.pluginPath, log: state.log },
    );
  if (state !== undefined && kept === undefined && !(atPath !== undefined && sameFile(atPath, state.original)))
    throw new RecordError(
      `the plugin dhv record kept at ${paths.original} is missing, and ${paths.pluginPath} is not that plugin\n` +
        `Nothing was changed. Decide by hand which file belongs at ${paths.pluginPath}; the record folder is ${paths.folder}.`,
      'RECORD_STATE_CHANGED',
      { path: paths.pluginPath },
    );
  const cleared: string[] = [];
  if (kept !== undefined) {
    if (atPath === undefined || !sameFile(atPath, kept))
      throw new RecordError(
        `${paths.original} is kept by an earlier dhv record that did not finish, and ${paths.pluginPath} is not the same file\n` +
          `Nothing was changed (dhv ${by} never removes a plugin it did not copy). Decide by hand which file belongs at ${paths.pluginPath}.`,
        'RECORD_STATE_CHANGED',
        { path: paths.pluginPath },
      );
    await unlink(paths.original);
    cleared.push(paths.original);
  }
  for (const leftover of [paths.recorderTemp, paths.state]) {
    if (
      await unlink(leftover).then(
        () => true,
        () => false,
      )
    )
      cleared.push(leftover);
  }
  if (cleared.length > 0) await rmdir(paths.folder).catch(() => undefined);
  return cleared;
}

async function tidy(paths: RecordPaths): Promise<void> {
  await unlink(paths.state).catch(() => undefined);
  await unlink(paths.recorderTemp).catch(() => undefined);
  await rmdir(paths.folder).catch(() => undefined); // kept while the log is in it
  await rmdir(dirname(paths.folder)).catch(() => undefined);
}

async function readState(paths: RecordPaths): Promise<RecordState | undefined> {
  const text = await readFile(paths.state, 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  if (text === undefined) return undefined;
  const parsed = stateSchema.safeParse(JSON.parse(text));
  if (!parsed.success)
    throw new RecordError(`${paths.state} is not what dhv record writes; nothing was changed`, 'RECORD_STATE_CHANGED', {
      path: paths.state,
    });
  return parsed.data;
}

function sameFile(a: { dev: number; ino: number }, b: { dev: number; ino: number }): boolean {
  return a.dev === b.dev && a.ino === b.ino;
}

function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

async function hasDigest(path: string, digest: string): Promise<boolean> {
  return sha256(await readFile(path)) === digest;
}

async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** setpriv(1) that knows --pdeathsig (util-linux 2.33, 2018), where a plugin's host keeps it. */
async function findSetpriv(): Promise<string | null> {
  for (const path of ['/usr/bin/setpriv', '/bin/setpriv', '/usr/sbin/setpriv']) {
    const info = await stat(path).catch(() => undefined);
    if (!info?.isFile() || (info.mode & 0o111) === 0) continue;
    if ((await readFile(path)).includes('pdeathsig')) return path;
  }
  return null;
}
