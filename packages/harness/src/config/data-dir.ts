import { join } from 'node:path';

/** The data dir a command uses when neither a flag, `$DHV_DATA_DIR` nor the config names one. */
export const DEFAULT_DATA_DIR = '.dhv';

/**
 * Every path under the simulated agent's data dir, defined once. The names follow the
 * Nomad client's: `client/` holds client state, the plugin and volumes dirs default to
 * `host_volume_plugins` and `host_volumes` beside it.
 */
export function dataDirLayout(dataDir: string) {
  const client = join(dataDir, 'client');
  return {
    /** Client state: everything the agent keeps between runs. */
    client,
    /** The node ID, generated once (Nomad's `client/client-id`). */
    nodeId: join(client, 'client-id'),
    /** The last fingerprint and restore, for commands that do not restore again. */
    nodeFacts: join(client, 'node.json'),
    /** One `<volume id>.json` record per dynamic host volume. */
    volumeRecords: join(client, 'host_volumes'),
    /** One file per volume whose last restore failed. */
    volumeFailures: join(client, 'host_volume_failures'),
    /** One `<volume id>.json` per created volume: the disk it was created on (restore refuses another). */
    volumeDisks: join(client, 'host_volume_disks'),
    /** One claim file per volume name, taken before a create runs. */
    nameClaims: join(client, 'host_volume_names'),
    /** One empty file per volume ID a create of this agent claimed, so gc knows what it may remove. */
    claimedIds: join(client, 'host_volume_ids'),
    /** The lock files that serialize work on one volume name across processes. */
    locks: join(client, 'locks'),
    /** `host_volume_plugin_dir` when the config names none. */
    pluginDir: join(dataDir, 'host_volume_plugins'),
    /** `host_volumes_dir` when the config names none. */
    volumesDir: join(dataDir, 'host_volumes'),
  };
}

export type DataDirLayout = ReturnType<typeof dataDirLayout>;
