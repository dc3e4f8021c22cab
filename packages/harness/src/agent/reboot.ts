import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { HostError, simulateReboot as rebootHost, type RebootReport } from '@dhv/sdk/host';
import { isRegistered, type VolumeRecord } from './state/client-state.js';
import { AgentError } from '../errors/agent-error.js';
import { AgentStore } from './state/store.js';

export type { RebootReport };

/** The agent's view of a data dir and volumes dir, as a reboot needs it. */
export interface RebootScope {
  dataDir: string;
  volumesDir: string;
}

/**
 * What a host reboot does to this agent's volumes: the mounts at and below each created
 * volume's path go away, and so do the loop devices backed by the files its plugin keeps
 * for it in `<volumes dir>/.<plugin id>/` (named by the volume ID). Nothing that client
 * state and those records do not name is touched: a foreign mount or loop device under
 * the volumes dir stays. Each volume is marked as needing a restore before anything is
 * taken from it, so a reboot cut short never leaves a volume that says ready.
 */
export async function simulateReboot(
  scope: RebootScope,
  signal?: AbortSignal,
  store = new AgentStore(scope.dataDir),
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
  try {
    return await rebootHost(
      { paths: records.map((r) => r.HostPath), images: await pluginFiles(scope.volumesDir, records) },
      signal ? { signal } : {},
    );
  } catch (err) {
    if (err instanceof HostError) throw new AgentError('REBOOT_FAILED', err.message, err.details);
    throw err;
  }
}

/** The files a plugin keeps for each volume in its hidden folder of the volumes dir. */
async function pluginFiles(volumesDir: string, records: readonly VolumeRecord[]): Promise<string[]> {
  const files: string[] = [];
  const byPlugin = new Map<string, string[]>();
  for (const r of records) byPlugin.set(r.CreateReq.PluginID, [...(byPlugin.get(r.CreateReq.PluginID) ?? []), r.ID]);
  for (const [plugin, ids] of byPlugin) {
    const folder = join(volumesDir, `.${plugin}`);
    const names = await readdir(folder).catch(() => [] as string[]);
    for (const name of names) if (ids.some((id) => name.startsWith(id))) files.push(join(folder, name));
  }
  return files;
}
