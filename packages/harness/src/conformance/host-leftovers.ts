import { lstat, readFile } from 'node:fs/promises';
import { basename, join, relative, sep } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  atOrBelow,
  attachedLoopDevicesSync,
  deepestFirst,
  describeMount,
  detachLoopDevice,
  inScope,
  readMountTableSync,
  unmount,
  type LoopDevice,
  type MountEntry,
  type TeardownScope,
} from '@dhv/sdk/host';
import { leftRunningWarning, type LeftRunning } from '@dhv/sdk/client';

/**
 * What a plugin's delete, or its failed create, left on the host that belongs to the
 * volume: dhv check's own teardown would release it silently, and on a node nothing does.
 * Each look reads the mount table and the loop devices once.
 */
export interface Leftover {
  volumeId: string;
  kind: 'loop-device' | 'mount' | 'folder' | 'process';
  /** `run`: any run of the plugin, which left a process of its group running. */
  after: 'delete' | 'failed create' | 'run';
  /** The leftover in a phrase: `loop device /dev/loop3 (backed by …)`. */
  what: string;
  /** The leftover, what the node suffers from it, and what dhv check did about it. */
  message: string;
}

/** The volume a call was about, as the suite knows it. */
export interface VolumeTrace {
  volumeId: string;
  volumeName: string;
  volumesDir: string;
  /** Where the volume is (or would have been): its created path, else `<volumes dir>/<volume id>`. */
  path: string;
}

interface HostState {
  table: MountEntry[];
  loops: LoopDevice[];
}

/** How long a loop device detached while still open may take to let go (as the SDK's detachLoopDevice waits). */
const LOOP_SETTLE_MS = 3_000;

/** Whether any of the devices is marked to be detached at its last close (its autoclear flag). */
async function someClearing(loops: readonly LoopDevice[]): Promise<boolean> {
  const flags = await Promise.all(
    loops.map((l) => readFile(`/sys/block/${basename(l.device)}/loop/autoclear`, 'utf8').catch(() => '0')),
  );
  return flags.some((flag) => flag.trim() === '1');
}

/**
 * Read synchronously: both are made by the kernel as they are read, never waiting on a disk,
 * and a look comes before and after every delete (the loop devices are a file each, each a
 * few round trips through libuv's threadpool when read asynchronously).
 */
function hostState(): HostState {
  return { table: readMountTableSync(), loops: attachedLoopDevicesSync() };
}

/**
 * What of the volume is on the host now: mounts at or below its path or named after it, and
 * loop devices that are its: backed by a file in the sandbox named after it or inside its
 * path, or mounted in one of its mounts.
 */
class VolumeOnHost {
  private constructor(
    readonly mounts: MountEntry[],
    readonly loops: LoopDevice[],
  ) {}

  /**
   * `since`: an earlier look at the volume. Its loop devices are still the volume's while
   * backed by the same file, and only its mounts count (one made since is another call's).
   */
  static async look(
    scope: TeardownScope,
    volume: VolumeTrace,
    state: HostState,
    since?: VolumeOnHost,
  ): Promise<VolumeOnHost> {
    const where = await inScope(scope, volume.path);
    const earlier = since?.loops ?? [];
    const mountIds = since && new Set(since.mounts.map((m) => m.mountId));
    // At or below its path, or anywhere in the sandbox under its name (a staging mount at `.mnt/<id>`).
    const mounts = state.table.filter(
      (m) =>
        ((where !== undefined && atOrBelow(where, m.mountPoint)) ||
          (atOrBelow(scope.canonical, m.mountPoint) && namesVolume(scope, m.mountPoint, volume))) &&
        (mountIds === undefined || mountIds.has(m.mountId)),
    );
    const sources = new Set(mounts.map((m) => m.source));
    const loops = state.loops.filter(
      (l) =>
        atOrBelow(scope.canonical, l.backingFile) &&
        l.backingFile !== scope.canonical &&
        (sources.has(l.device) ||
          earlier.some((e) => e.device === l.device && e.backingFile === l.backingFile) ||
          (where !== undefined && atOrBelow(where, l.backingFile)) ||
          namesVolume(scope, l.backingFile, volume)),
    );
    return new VolumeOnHost(mounts, loops);
  }
}

/** A path below the sandbox with a component named after the volume (`<id>`, `<id>.img`, `<name>.img`). */
function namesVolume(scope: TeardownScope, file: string, volume: VolumeTrace): boolean {
  const keys = [volume.volumeId, ...(isPlainName(volume.volumeName) ? [volume.volumeName] : [])];
  return relative(scope.canonical, file)
    .split(sep)
    .some((part) => keys.some((key) => part === key || part.startsWith(`${key}.`)));
}

const isPlainName = (name: string) => name !== '' && name !== '.' && name !== '..' && !name.includes('/');

/**
 * Taken just before a delete: what of the volume is on the host then. After a successful
 * delete, `afterDelete` reports what of it is still there (a mount made since, by a create
 * running beside the delete, is not the deleted volume's).
 */
export class BeforeDelete {
  private constructor(
    private readonly scope: TeardownScope,
    private readonly volume: VolumeTrace,
    private readonly before: VolumeOnHost,
  ) {}

  static async take(scope: TeardownScope, volume: VolumeTrace): Promise<BeforeDelete> {
    return new BeforeDelete(scope, volume, await VolumeOnHost.look(scope, volume, hostState()));
  }

  /** What the successful delete left of the volume, each released by dhv check now. */
  async afterDelete(): Promise<Leftover[]> {
    let now = await VolumeOnHost.look(this.scope, this.volume, hostState(), this.before);
    // A device detached while still open (the last close of an unmount, a killed mkfs) is
    // only marked to clear at its last close: it lets go a moment after the delete returns.
    for (
      let waited = 0;
      now.mounts.length === 0 && (await someClearing(now.loops)) && waited < LOOP_SETTLE_MS;
      waited += 50
    ) {
      await sleep(50);
      now = await VolumeOnHost.look(this.scope, this.volume, hostState(), this.before);
    }
    const after = `after the delete of volume ${this.volume.volumeId} succeeded,`;
    // Only what was the volume's before the delete: a device attached since is another call's.
    const loops = now.loops.filter((l) =>
      this.before.loops.some((b) => b.device === l.device && b.backingFile === l.backingFile),
    );
    return release(this.volume.volumeId, 'delete', now.mounts, loops, {
      mount: (what) =>
        `${after} ${what} was still there: on a node nothing unmounts it, so the deleted volume's filesystem and its device stay busy for good`,
      loop: (what) =>
        `${after} ${what} was still attached: its image's space is never freed, and the node runs out of loop devices after a few hundred deletes`,
    });
  }
}

/**
 * What a failed create of a volume no other create made left of it: its folder, a mount
 * at or below it, a loop device that is its. The agent never calls delete after a
 * failed create, so on a node all of it stays.
 */
export async function afterFailedCreate(scope: TeardownScope, volume: VolumeTrace): Promise<Leftover[]> {
  // By its ID only: a create may rightly fail because its name is another volume's, whose folder that is.
  const byId = { ...volume, volumeName: '' };
  const now = await VolumeOnHost.look(scope, byId, hostState());
  const left = `the failed create of volume ${volume.volumeId} left`;
  const never = 'the agent never calls delete after a failed create, so';
  const found = await release(volume.volumeId, 'failed create', now.mounts, now.loops, {
    mount: (what) => `${left} ${what}: ${never} it stays mounted on the node; undo the mount when the create fails`,
    loop: (what) =>
      `${left} ${what} attached: ${never} nothing detaches it, and the node runs out of loop devices; undo the attach when the create fails`,
  });
  for (const folder of new Set([volume.path, join(volume.volumesDir, volume.volumeId)])) {
    if ((await inScope(scope, folder)) === undefined) continue;
    if (
      !(await lstat(folder).then(
        () => true,
        () => false,
      ))
    )
      continue;
    found.push({
      volumeId: volume.volumeId,
      kind: 'folder',
      after: 'failed create',
      what: folder,
      message: `${left} ${folder}: ${never} it stays on the node; remove what the create made before it fails (dhv check removes it with its sandbox)`,
    });
  }
  return found;
}

/** Reports each leftover and releases it (mounts deepest first, then loop devices), saying whether that worked. */
async function release(
  volumeId: string,
  after: Leftover['after'],
  mounts: MountEntry[],
  loops: LoopDevice[],
  describe: { mount: (what: string) => string; loop: (what: string) => string },
): Promise<Leftover[]> {
  const found: Leftover[] = [];
  for (const m of deepestFirst(mounts)) {
    const done = await unmount(m.mountPoint)
      .catch(() => unmount(m.mountPoint, { lazy: true }))
      .then(
        () => 'dhv check unmounted it',
        (err: unknown) => `dhv check could not unmount it: ${(err as Error).message}`,
      );
    const what = `the mount at ${m.mountPoint} (${describeMount(m)})`;
    found.push({ volumeId, kind: 'mount', after, what, message: `${describe.mount(what)} (${done})` });
  }
  for (const l of loops) {
    const done = await detachLoopDevice(l.device).then(
      () => 'dhv check detached it',
      (err: unknown) => `dhv check could not detach it: ${(err as Error).message}`,
    );
    const what = `loop device ${l.device} (backed by ${l.backingFile}${l.deleted ? ', deleted' : ''})`;
    found.push({ volumeId, kind: 'loop-device', after, what, message: `${describe.loop(what)} (${done})` });
  }
  return found;
}

/**
 * The leftovers a check's calls met, in one line for that check's report: the checks that
 * judge them (`delete.releases-host-resources`, `errors.failed-create-leaves-nothing`) say
 * at length what each costs a node.
 */
export function summariseLeftovers(leftovers: readonly Leftover[]): string | undefined {
  const listed = (these: readonly Leftover[]) => {
    const shown = these.slice(0, 3).map((l) => l.what);
    return `${shown.join(', ')}${these.length > shown.length ? ` and ${these.length - shown.length} more` : ''}`;
  };
  const of = (after: Leftover['after']) => leftovers.filter((l) => l.after === after);
  const parts: string[] = [];
  if (of('delete').length > 0)
    parts.push(`the plugin's successful deletes left ${listed(of('delete'))} (see delete.releases-host-resources)`);
  if (of('failed create').length > 0)
    parts.push(`its failed creates left ${listed(of('failed create'))} (see errors.failed-create-leaves-nothing)`);
  if (parts.length > 0) parts.push('dhv check released what it could at once, and removes the rest with its sandbox');
  if (of('run').length > 0)
    parts.push(
      `the plugin exited leaving ${listed(of('run'))} of its process group running (dhv check killed them; a real agent leaves them running)`,
    );
  return parts.length === 0 ? undefined : parts.join('; ');
}

/** How a create or delete call ended, for the look after it. */
export type CallEnd = 'succeeded' | 'failed' | 'not-judged';

interface CallRequest {
  volumeId: string;
  volumeName?: string;
  volumesDir: string;
  createdPath?: string;
}

/**
 * The looks of one check's context: after each successful delete, and after each failed
 * create of a volume no other create in the check was started for (a refused repeat or a
 * failed create beside another of the same volume leaves the other's volume, rightly).
 * Every leftover found is added to `found`, already released.
 */
export class LeftoverLooks {
  private readonly createsStarted = new Map<string, number>();
  private readonly paths = new Map<string, string>();

  constructor(
    private readonly scope: TeardownScope,
    readonly found: Leftover[],
  ) {}

  /** A create of the volume was started (by any way of running the plugin). */
  started(volumeId: string | undefined): void {
    if (volumeId === undefined) return;
    this.createsStarted.set(volumeId, (this.createsStarted.get(volumeId) ?? 0) + 1);
  }

  /** A create answered this path: the volume's deletes are looked at there. */
  created(volumeId: string | undefined, path: string): void {
    if (volumeId !== undefined) this.paths.set(volumeId, path);
  }

  /**
   * Runs the call, then looks at what it left when it was a successful delete or a failed
   * first create. The caller says a create was `started` before it runs.
   */
  async around<T>(
    operation: string,
    request: Partial<CallRequest>,
    call: () => Promise<T>,
    ended: (outcome: { value: T } | { error: unknown }) => CallEnd,
  ): Promise<T> {
    const { volumeId, volumesDir } = request;
    if ((operation !== 'create' && operation !== 'delete') || volumeId === undefined || volumesDir === undefined)
      return call();
    const trace = this.traceOf({ ...request, volumeId, volumesDir });
    const before = operation === 'delete' ? await BeforeDelete.take(this.scope, trace) : undefined;
    let value: T;
    try {
      value = await call();
    } catch (error) {
      if (operation === 'create' && ended({ error }) === 'failed') await this.lookAfterFailedCreate(trace);
      throw error;
    }
    const end = ended({ value });
    if (before !== undefined && end === 'succeeded') this.found.push(...(await before.afterDelete()));
    if (operation === 'create' && end === 'failed') await this.lookAfterFailedCreate(trace);
    return value;
  }

  /** A run that exited leaving processes of its group running (the client killed them). */
  leftRunning(operation: string, volumeId: string | undefined, left: readonly LeftRunning[]): void {
    if (left.length === 0) return;
    const of = volumeId === undefined ? operation : `${operation} of volume ${volumeId}`;
    this.found.push({
      volumeId: volumeId ?? '',
      kind: 'process',
      after: 'run',
      what: left.map((p) => `process ${p.pid} (${p.command})`).join(', '),
      message: `the ${of}: ${leftRunningWarning([...left])}`,
    });
  }

  private async lookAfterFailedCreate(trace: VolumeTrace): Promise<void> {
    if (this.createsStarted.get(trace.volumeId) !== 1 || this.paths.has(trace.volumeId)) return;
    this.found.push(...(await afterFailedCreate(this.scope, trace)));
  }

  private traceOf(request: CallRequest): VolumeTrace {
    const given = request.createdPath;
    const path =
      this.paths.get(request.volumeId) ??
      (given && given !== request.volumesDir ? given : join(request.volumesDir, request.volumeId));
    return { volumeId: request.volumeId, volumeName: request.volumeName ?? '', volumesDir: request.volumesDir, path };
  }
}
