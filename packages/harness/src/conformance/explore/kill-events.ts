import { watch, type FSWatcher } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { entriesAtOrBelow, readMountTable } from '@dhv/sdk/host';

/**
 * The steps of a plugin's own create a killed create can be killed at, when they can be
 * seen from outside: its first `write` (a new entry in the volumes dir), its first `rename`
 * (an entry of the volumes dir, or of a folder in it, found under another name), its first
 * `mount` (a new line of the mount table at or below the volumes dir, in the namespace the
 * plugin runs in, which is dhv's own).
 */
export const KILL_EVENTS = ['write', 'rename', 'mount'] as const;
export type KillEvent = (typeof KILL_EVENTS)[number];

/** How often the mount table is read while a create is watched for its first mount. */
const MOUNT_POLL_MS = 5;

/** A watch of the volumes dir for one event: `seen` aborts when it is seen; `stop` ends the watch. */
export interface EventWatch {
  seen: AbortSignal;
  stop(): void;
}

/** Starts watching `volumesDir` for `event`; resolves once the watch is in place, before the plugin starts. */
export async function watchFor(event: KillEvent, volumesDir: string): Promise<EventWatch> {
  const controller = new AbortController();
  const fire = () => controller.abort(new Error(`the plugin's first ${event}`));
  if (event === 'mount') return watchMounts(volumesDir, controller, fire, await mountIdsBelow(volumesDir));
  const before = event === 'rename' ? await entries(volumesDir) : new Map<number, string>();
  let watcher: FSWatcher | undefined;
  let scanning = Promise.resolve();
  try {
    watcher = watch(volumesDir, { recursive: event === 'rename', persistent: false }, () => {
      if (event === 'write') return fire();
      // One scan after another: a rename is an inode the last scan knew under another name.
      scanning = scanning.then(async () => {
        if (controller.signal.aborted) return;
        const now = await entries(volumesDir);
        const names = new Set(now.values());
        for (const [ino, name] of now) {
          const was = before.get(ino);
          if (was !== undefined && was !== name && !names.has(was)) return fire();
        }
        for (const [ino, name] of now) before.set(ino, name);
      });
    });
    watcher.on('error', () => undefined);
  } catch {
    // A volumes dir that cannot be watched: the create runs to its end, as when the event never comes.
  }
  return { seen: controller.signal, stop: () => watcher?.close() };
}

/** The mounts at or below `dir` now (the volumes dir may be one itself, host-conditions.ts). */
async function mountIdsBelow(dir: string): Promise<Set<number>> {
  const table = await readMountTable().catch(() => []);
  return new Set(entriesAtOrBelow(table, dir).map((m) => m.mountId));
}

/** Reads the table every MOUNT_POLL_MS after the last read ended: a slow read on a busy host never piles up. */
function watchMounts(volumesDir: string, controller: AbortController, fire: () => void, old: Set<number>): EventWatch {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const poll = async () => {
    const now = await mountIdsBelow(volumesDir);
    if (stopped || controller.signal.aborted) return;
    if ([...now].some((id) => !old.has(id))) return fire();
    timer = setTimeout(() => void poll(), MOUNT_POLL_MS);
  };
  timer = setTimeout(() => void poll(), MOUNT_POLL_MS);
  return {
    seen: controller.signal,
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

/** The entries of `dir` and of the folders in it, by inode. */
async function entries(dir: string): Promise<Map<number, string>> {
  const found = new Map<number, string>();
  const top = await readdir(dir).catch(() => [] as string[]);
  for (const name of top) {
    const stat = await lstat(join(dir, name)).catch(() => undefined);
    if (stat === undefined) continue;
    found.set(stat.ino, name);
    if (!stat.isDirectory()) continue;
    for (const inner of await readdir(join(dir, name)).catch(() => [] as string[])) {
      const innerStat = await lstat(join(dir, name, inner)).catch(() => undefined);
      if (innerStat !== undefined) found.set(innerStat.ino, join(name, inner));
    }
  }
  return found;
}
