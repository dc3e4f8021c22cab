import { readdir } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import {
  HostError,
  attachedLoopDevices,
  simulateReboot as rebootHost,
  teardownScope,
  type RebootReport,
  type TeardownScope,
} from '@dhv/sdk/host';
import { isRegistered, type VolumeRecord } from './state/client-state.js';
import { AgentError } from '../errors/agent-error.js';
import type { AgentStore } from './state/store.js';

export type { RebootReport };

/** The agent's view of a data dir and volumes dir, as a reboot needs it. */
export interface RebootScope {
  dataDir: string;
  volumesDir: string;
}

/**
 * What a host reboot does to this agent's volumes: the mounts each created volume's
 * plugin made (recorded by identity at its create or last restore) go away, and so do the loop devices backed by the files its plugin keeps
 * for it in `<volumes dir>/.<plugin id>/` (named by the volume ID), also when such a file
 * was unlinked while attached. Nothing that client state and those records do not name
 * is touched: a foreign mount or loop device under the volumes dir stays, a mount at a
 * volume's path that its plugin did not make (another data dir's volume there) stays and
 * is reported, and a volume
 * path outside the volumes dir or reached through a link is left alone (reported as
 * skipped), so a plugin that answered `/`, or a volume folder swapped for a link, never
 * has the host unmounted. Each volume is marked as needing a restore before anything is
 * taken from it, so a reboot cut short never leaves a volume that says ready.
 */
export async function simulateReboot(
  scope: RebootScope,
  store: AgentStore,
  signal?: AbortSignal,
): Promise<RebootReport> {
  return store.lock.exclusive({ doing: 'simulating a reboot' }, () => reboot(scope, store, signal), signal);
}

async function reboot(scope: RebootScope, store: AgentStore, signal?: AbortSignal): Promise<RebootReport> {
  const records = (await store.records.list()).filter((r) => !isRegistered(r));
  const health = store.health;
  const at = new Date().toISOString();
  for (const r of records) {
    await health.markFailed(r.ID, {
      code: 'REBOOTED',
      error: 'unmounted by a simulated reboot and not restored yet; run dhv agent restart',
      at,
    });
  }
  const volumes = await teardownScope(scope.volumesDir);
  const recorded = await store.mounts.all();
  try {
    return await rebootHost(
      {
        scope: volumes ?? scope.volumesDir,
        paths: records.map((r) => r.HostPath),
        // Only the mounts these volumes' plugins made come off, each checked against the live table just before.
        mounts: records.flatMap((r) => recorded.get(r.ID) ?? []),
        images: volumes ? await pluginFiles(volumes, records) : [],
      },
      signal ? { signal } : {},
    );
  } catch (err) {
    if (err instanceof HostError) throw new AgentError('REBOOT_FAILED', err.message, err.details);
    throw err;
  }
}

/**
 * The files a plugin keeps for each volume in its hidden folder of the volumes dir: those
 * there now, and those a loop device is still backed by after they were unlinked.
 */
async function pluginFiles(volumes: TeardownScope, records: readonly VolumeRecord[]): Promise<string[]> {
  const files = new Set<string>();
  const byPlugin = new Map<string, string[]>();
  for (const r of records) byPlugin.set(r.CreateReq.PluginID, [...(byPlugin.get(r.CreateReq.PluginID) ?? []), r.ID]);
  const loops = await attachedLoopDevices();
  for (const [plugin, ids] of byPlugin) {
    const folder = join(volumes.dir, `.${plugin}`);
    const ours = (name: string) => ids.some((id) => name.startsWith(id));
    for (const name of await readdir(folder).catch(() => [] as string[])) if (ours(name)) files.add(join(folder, name));
    const inKernelTerms = join(volumes.canonical, `.${plugin}`);
    for (const l of loops)
      if (l.deleted && dirname(l.backingFile) === inKernelTerms && ours(basename(l.backingFile)))
        files.add(join(folder, basename(l.backingFile)));
  }
  return [...files];
}
