import { lstat, readdir, realpath, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { isFreeLock, isUuid, removeFreeLock } from '@dhv/sdk';
import { BUILTIN_MKDIR_ID, PluginError, deleteRequest, valueOf, type PluginRunner } from '@dhv/sdk/client';
import type { AgentConfig } from '../config/agent-config.js';
import type { AgentStore } from './state/store.js';
import { attachedLoopDevices, canonicalFolder, mountsBelow, type LoopDevice } from '@dhv/sdk/host';
import { DhvError } from '../errors/dhv-error.js';

/**
 * Orphans: volumes on disk under the volumes dir that client state does not know. The
 * agent writes state only after a plugin's create succeeded, so a `dhv` killed between
 * the two leaves a volume nobody will restore or delete. They are found by what plugins
 * leave in the volumes dir: `<volumes dir>/<volume id>` (every plugin that follows the
 * protocol's suggestion, the built-in mkdir included), and files named by a volume ID in
 * a plugin's hidden folder `<volumes dir>/.<plugin id>/` (as dhv-loopback keeps images),
 * and a volume a create was still building, `<volumes dir>/.<plugin id>-<volume id>.new`.
 */

export type OrphanKind = 'directory' | 'mount point' | 'symlink' | 'file' | 'plugin files';

export interface Orphan {
  id: string;
  /** The name its create claimed, when the claim is still there. */
  name: string | undefined;
  kind: OrphanKind;
  /** Everything on disk that belongs to it. */
  paths: string[];
  /** The plugin whose delete removes it: one that left files in its hidden folder, else the built-in mkdir. */
  plugin: string | undefined;
  /** Set when gc cannot remove it safely by itself, saying what a person must do. */
  blocker: string | undefined;
}

export class OrphanError extends DhvError {
  readonly code = 'ORPHAN_NOT_REMOVED';
  constructor(
    message: string,
    readonly volumeId: string,
    readonly paths: string[],
  ) {
    super(message, { volumeId, paths });
  }
}

/** Lock files are not volumes: the SDK's lock takes over one whose holder died. */
const LOCK_SUFFIX = '.lock';
const STAGING_SUFFIX = '.new';

export interface RemoveOptions {
  signal?: AbortSignal;
}

export type RemoveOutcome = 'removed' | 'recorded meanwhile';

export interface GcOptions {
  remove?: boolean;
  /** Only the orphans whose ID starts with one of these. */
  ids?: readonly string[];
  signal?: AbortSignal;
}

/**
 * gc for one agent (`Agent.orphans()`): finds orphans with the agent's store and removes
 * each with the delete of the plugin that made it, run by the agent's runner.
 */
export class OrphanCollector {
  constructor(
    private readonly config: AgentConfig,
    private readonly store: AgentStore,
    private readonly runner: PluginRunner,
  ) {}

  /** Every orphan under the volumes dir, sorted by ID. */
  find(): Promise<Orphan[]> {
    return findOrphans(this.config, this.store);
  }

  /** See removeOrphan. */
  remove(orphan: Orphan, options: RemoveOptions = {}): Promise<RemoveOutcome> {
    return removeOrphan(this.config, this.store, this.runner, orphan, options);
  }

  /** Lists the orphans (only those in `ids`, when given) and, with `remove`, removes each, reporting every failure. */
  collect(options: GcOptions = {}): Promise<GcReport> {
    // Removing holds the agent exclusive: no create, delete or restart runs while gc decides what is an orphan.
    if (!options.remove) return this.report(options);
    return this.store.lock.exclusive(
      { doing: 'removing orphaned volumes (gc --remove)' },
      () => this.report(options),
      options.signal,
    );
  }

  private async report(options: GcOptions): Promise<GcReport> {
    const { config, store } = this;
    const all = await this.find();
    const orphans =
      options.ids && options.ids.length > 0 ? all.filter((o) => options.ids!.some((id) => o.id.startsWith(id))) : all;
    const target = await realpath(config.volumesDir).catch(() => undefined);
    const report: GcReport = {
      volumesDir: config.volumesDir,
      volumesDirTarget: target !== undefined && target !== config.volumesDir ? target : undefined,
      freeLocks: await leftLockFiles(config, store),
      orphans,
      removed: [],
      failed: [],
    };
    if (!options.remove) return report;
    report.freeLocks = [];
    for (const lock of await leftLockFiles(config, store))
      if (!(await removeFreeLock(lock))) report.freeLocks.push(lock);
    for (const orphan of orphans) {
      try {
        if ((await this.remove(orphan, options.signal ? { signal: options.signal } : {})) === 'removed')
          report.removed.push(orphan.id);
      } catch (err) {
        if (!(err instanceof OrphanError)) throw err;
        report.failed.push({ id: orphan.id, error: err });
      }
    }
    return report;
  }
}

async function findOrphans(config: AgentConfig, store: AgentStore): Promise<Orphan[]> {
  const { records, damaged } = await store.records.scan();
  // A volume whose record does not load is still this agent's: never an orphan.
  const known = new Set([...records.map((r) => r.ID), ...damaged.map((d) => d.id)]);
  // A registered volume may live at <volumes dir>/<uuid> under another ID.
  for (const r of records) if (dirname(r.HostPath) === config.volumesDir) known.add(basename(r.HostPath));

  const traces = await volumeTraces(config.volumesDir);
  const claims = await store.claims.namesById();
  const names = store.claims;
  const holders: Holders = {
    mounts: (await mountsBelow(config.volumesDir)).map((m) => m.mountPoint),
    loops: await attachedLoopDevices(),
    canonical: (await canonicalFolder(config.volumesDir)) ?? config.volumesDir,
    volumesDir: config.volumesDir,
  };
  const orphans: Orphan[] = [];
  for (const [id, trace] of [...traces].sort(([a], [b]) => a.localeCompare(b))) {
    if (known.has(id)) continue;
    const orphan = describeOrphan(id, trace, claims.get(id), claims.has(id) || (await names.wasClaimed(id)));
    const mountedAtIt = holders.mounts.includes(join(holders.canonical, id));
    orphans.push({
      ...orphan,
      kind: mountedAtIt ? 'mount point' : orphan.kind,
      blocker: orphan.blocker ?? inUseBlocker(id, orphan.paths, holders),
    });
  }
  return orphans;
}

/** What the kernel holds of the volumes dir: its mounts and every attached loop device. */
interface Holders {
  /** Mount points below the volumes dir, as the mount table names them. */
  mounts: string[];
  loops: LoopDevice[];
  /** The volumes dir with its links resolved, as the mount table and sysfs name paths in it. */
  canonical: string;
  volumesDir: string;
}

/**
 * gc never removes what is in use: anything mounted at or below the volume's paths, or a
 * file backing a loop device (even one since unlinked). Such a volume is live, whoever
 * holds it, and a plugin's delete would unmount and detach it; a person must let go first.
 */
function inUseBlocker(id: string, paths: readonly string[], holders: Holders): string | undefined {
  const inKernelTerms = (path: string) => holders.canonical + path.slice(holders.volumesDir.length);
  const places = [join(holders.volumesDir, id), ...paths].map(inKernelTerms);
  const mounted = holders.mounts.filter((m) => places.some((p) => m === p || m.startsWith(`${p}/`)));
  const looped = holders.loops.filter((l) =>
    places.some((p) => l.backingFile === p || l.backingFile.startsWith(`${p}/`)),
  );
  if (mounted.length === 0 && looped.length === 0) return undefined;
  const steps = [...deepest(mounted).map((m) => `umount ${m}`), ...looped.map((l) => `losetup -d ${l.device}`)];
  const what = [
    ...(mounted.length > 0 ? [`${mounted.join(', ')} ${mounted.length === 1 ? 'is' : 'are'} mounted`] : []),
    ...looped.map((l) => `${l.device} is backed by ${l.backingFile}${l.deleted ? ' (deleted)' : ''}`),
  ];
  return `it is in use (${what.join('; ')}), so gc leaves it alone; if it really is an orphan, run ${steps.join(' && ')}, then gc again`;
}

const deepest = (points: string[]) => [...points].sort((a, b) => b.split('/').length - a.split('/').length);

interface Trace {
  /** What is at `<volumes dir>/<id>`, if anything. */
  volumePath: { path: string; kind: 'directory' | 'symlink' | 'file' } | undefined;
  /** Files in plugins' hidden folders, by plugin ID. */
  pluginFiles: Map<string, string[]>;
}

async function volumeTraces(volumesDir: string): Promise<Map<string, Trace>> {
  const traces = new Map<string, Trace>();
  const traceOf = (id: string) => {
    let t = traces.get(id);
    if (!t) traces.set(id, (t = { volumePath: undefined, pluginFiles: new Map() }));
    return t;
  };
  for (const name of await listDir(volumesDir)) {
    const path = join(volumesDir, name);
    const info = await lstat(path).catch(() => undefined);
    if (!info) continue;
    if (isUuid(name)) {
      traceOf(name).volumePath = {
        path,
        kind: info.isSymbolicLink() ? 'symlink' : info.isDirectory() ? 'directory' : 'file',
      };
    } else if (stagedVolume(name)) {
      const { pluginId, id } = stagedVolume(name)!;
      const files = traceOf(id).pluginFiles;
      files.set(pluginId, [...(files.get(pluginId) ?? []), path]);
    } else if (name.startsWith('.') && name.length > 1 && info.isDirectory()) {
      const pluginId = name.slice(1);
      for (const file of await listDir(path)) {
        const id = file.slice(0, 36);
        if (!isUuid(id) || file.endsWith(LOCK_SUFFIX)) continue;
        const files = traceOf(id).pluginFiles;
        files.set(pluginId, [...(files.get(pluginId) ?? []), join(path, file)]);
      }
    }
  }
  return traces;
}

/**
 * `.<plugin id>-<volume id>.new`: a volume a plugin builds beside the volumes it has
 * published and renames into place when whole (dhv-mkdir does); a create killed before
 * the rename leaves it.
 */
function stagedVolume(name: string): { pluginId: string; id: string } | undefined {
  if (!name.startsWith('.') || !name.endsWith(STAGING_SUFFIX)) return undefined;
  const core = name.slice(1, -STAGING_SUFFIX.length);
  const id = core.slice(-36);
  const pluginId = core.slice(0, -37);
  if (!isUuid(id) || core.at(-37) !== '-' || pluginId === '') return undefined;
  return { pluginId, id };
}

function describeOrphan(id: string, trace: Trace, name: string | undefined, claimed: boolean): Orphan {
  const paths = [...(trace.volumePath ? [trace.volumePath.path] : []), ...[...trace.pluginFiles.values()].flat()];
  const makers = [...trace.pluginFiles.keys()];
  const base = { id, name, paths };
  const kind: OrphanKind = trace.volumePath?.kind ?? 'plugin files';
  if (!claimed) {
    // Every create claims its name before its plugin runs: what no claim names was not made
    // by a create of this agent (another data dir's volume, a planted file), and removing it could erase someone's data.
    return {
      ...base,
      kind: makers.length > 0 ? 'plugin files' : kind,
      plugin: undefined,
      blocker: `no create of this agent claimed volume ID ${id} (this data dir's name claims do not name it), so it is not known to be a volume of this agent; dhv leaves it alone: remove it by hand if it is an orphan`,
    };
  }
  if (makers.length > 1) {
    return {
      ...base,
      kind: 'plugin files',
      plugin: undefined,
      blocker: `plugins ${makers.join(', ')} all hold files of this volume; remove them by hand`,
    };
  }
  if (makers.length === 1) return { ...base, kind: 'plugin files', plugin: makers[0], blocker: undefined };
  if (kind !== 'directory') return { ...base, kind, plugin: undefined, blocker: undefined };
  return { ...base, kind: 'directory', plugin: BUILTIN_MKDIR_ID, blocker: undefined };
}

/**
 * Removes one orphan with the delete of the plugin that made it. Holding the name lock
 * of its create (when its claim survives) and checking client state again under it, so
 * a create still running in another `dhv` process is never mistaken for an orphan.
 */
async function removeOrphan(
  config: AgentConfig,
  store: AgentStore,
  runner: PluginRunner,
  orphan: Orphan,
  options: RemoveOptions,
): Promise<RemoveOutcome> {
  const work = async (): Promise<RemoveOutcome> => {
    if (await store.records.get(orphan.id)) return 'recorded meanwhile';
    if (orphan.blocker)
      throw new OrphanError(`orphan ${orphan.id} was not removed: ${orphan.blocker}`, orphan.id, orphan.paths);
    try {
      await deleteWithPlugin(config, store, runner, orphan, options.signal);
    } catch (err) {
      const why = err instanceof PluginError ? err.message : (err as Error).message;
      throw new OrphanError(`orphan ${orphan.id} was not removed: ${why}`, orphan.id, orphan.paths);
    }
    const left = (await findOrphans(config, store)).find((o) => o.id === orphan.id);
    if (!left) {
      // The claim its create left (no record names it, so it held nothing) goes with it.
      if (orphan.name !== undefined) await store.claims.release(orphan.name, orphan.id);
      await store.claims.forgetId(orphan.id);
    }
    if (left) {
      throw new OrphanError(
        `orphan ${orphan.id}: plugin ${orphan.plugin ?? '(none)'} reported success but left ${left.paths.join(', ')}; remove it by hand`,
        orphan.id,
        left.paths,
      );
    }
    return 'removed';
  };
  const doing = { doing: `removing orphan ${orphan.id}` };
  if (orphan.name === undefined) return store.lock.shared(doing, work, options.signal);
  return store.lock.name(orphan.name, doing, work, options.signal);
}

async function deleteWithPlugin(
  config: AgentConfig,
  store: AgentStore,
  runner: PluginRunner,
  orphan: Orphan,
  signal: AbortSignal | undefined,
): Promise<void> {
  if (orphan.plugin === undefined) {
    // A symlink or a file at <volumes dir>/<id>: removed itself, a link never followed.
    for (const path of orphan.paths)
      await unlink(path).catch((err: NodeJS.ErrnoException) =>
        err.code === 'ENOENT' ? undefined : Promise.reject(err),
      );
    return;
  }
  // Looked up first, so a plugin gone from the plugin dir reads as the agent's lookup error.
  await runner.lookup(config.pluginDir, orphan.plugin);
  valueOf(
    await runner.run('delete', {
      plugin: { pluginDir: config.pluginDir, pluginId: orphan.plugin },
      request: deleteRequest(
        {
          volumesDir: config.volumesDir,
          pluginDir: config.pluginDir,
          nodePool: config.nodePool,
          volumeName: orphan.name ?? orphan.id,
          volumeId: orphan.id,
          nodeId: await store.nodeId(),
        },
        // Empty: the plugin derives the path as its create did, which is what it must remove.
        '',
      ),
      signal,
    }),
  );
}

export interface GcReport {
  volumesDir: string;
  /** Where the volumes dir leads when it is a symbolic link (or sits below one). */
  volumesDirTarget: string | undefined;
  /** Lock files left by holders that died, free now; --remove removes them. */
  freeLocks: string[];
  orphans: Orphan[];
  removed: string[];
  failed: Array<{ id: string; error: OrphanError }>;
}

/**
 * Lock files in the places dhv and the reference plugins keep them: the agent's name
 * locks, `<volumes dir>/.dhv-mkdir-*.lock` and `<volumes dir>/.<plugin id>/*.lock`. A
 * holder unlinks its lock file as it lets go; one killed leaves it behind (the lock of
 * every name is shared and stays, so it is never listed). Only files nobody holds are listed (each is tried with a non-blocking lock, then let go).
 */
async function leftLockFiles(config: AgentConfig, store: AgentStore): Promise<string[]> {
  const candidates: string[] = await store.claims.nameLockFiles();
  for (const name of await listDir(config.volumesDir)) {
    const path = join(config.volumesDir, name);
    if (name.startsWith('.') && name.endsWith(LOCK_SUFFIX)) candidates.push(path);
    else if (name.startsWith('.') && (await lstat(path).catch(() => undefined))?.isDirectory()) {
      for (const file of await listDir(path)) if (file.endsWith(LOCK_SUFFIX)) candidates.push(join(path, file));
    }
  }
  const free: string[] = [];
  for (const lock of candidates) if (await isFreeLock(lock)) free.push(lock);
  return free;
}

async function listDir(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR')
      return [];
    throw err;
  }
}
