import { join } from 'node:path';
import { isUuid } from '@dhv/sdk';
import { dataDirLayout } from '../config/data-dir.js';
import type { VolumeRecord } from '../agent/state/client-state.js';
import { AgentStore } from '../agent/state/store.js';

export interface SeedVolume {
  id: string;
  name: string;
  pluginId: string;
}

/**
 * Writes into `dataDir` the client state that creates of `volumes` would have left (their
 * records and name claims), and makes nothing on disk: for testing or timing a restore at
 * scale whatever the store's format. Each volume is recorded as a create by the spec
 * `type = "host"`, `name`, `plugin_id` on this node would record it, at the built-in
 * mkdir's path `<volumes dir>/<id>` (a plugin's restore reports its own).
 */
export async function seedVolumes(
  dataDir: string,
  volumes: ReadonlyArray<SeedVolume>,
  { volumesDir = dataDirLayout(dataDir).volumesDir, nodePool = 'default' } = {},
): Promise<void> {
  const store = await AgentStore.open(dataDir);
  const nodeId = await store.nodeId();
  const now = new Date().toISOString();
  const records: VolumeRecord[] = volumes.map((v) => {
    if (!isUuid(v.id)) throw new Error(`seedVolumes: volume id ${JSON.stringify(v.id)} is not a UUID`);
    return {
      ID: v.id,
      HostPath: join(volumesDir, v.id),
      CreateReq: {
        ID: v.id,
        Name: v.name,
        PluginID: v.pluginId,
        Namespace: 'default',
        NodeID: nodeId,
        RequestedCapacityMinBytes: 0n,
        RequestedCapacityMaxBytes: 0n,
        Parameters: null,
      },
      Volume: {
        Namespace: 'default',
        NodePool: nodePool,
        CapacityBytes: 0n,
        RequestedCapabilities: [{ AccessMode: 'single-node-writer', AttachmentMode: 'file-system' }],
        Constraints: [],
        CreateTime: now,
        ModifyTime: now,
      },
    };
  });
  await store.records.putMany(records);
  const winners = new Map<string, string>();
  for (const [name, id] of Object.entries(await store.claims.all())) winners.set(name, id);
  for (const r of records) if (!winners.has(r.CreateReq.Name)) winners.set(r.CreateReq.Name, r.ID);
  const recorded = new Set(await store.records.ids());
  await store.claims.replaceAll(winners, recorded);
}
