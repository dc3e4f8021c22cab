import { join } from 'node:path';

/**
 * Every path of the agent's state under its data dir, defined once and known only to the
 * state store (`npm run lint` keeps it so). The names follow the Nomad client's: `client/`
 * holds client state.
 */
export function stateLayout(dataDir: string) {
  const client = join(dataDir, 'client');
  return {
    dataDir,
    /** Client state: everything the agent keeps between runs. */
    client,
    /** The node ID, generated once (Nomad's `client/client-id`). */
    nodeId: join(client, 'client-id'),
    /** The last fingerprint and restore, for commands that do not restore again. */
    nodeFacts: join(client, 'node.json'),
    /**
     * What the last restart read from the folders below (records, claims, disk records) in
     * one file, trusted only while each folder is as it was (state-index.ts).
     */
    stateIndex: join(client, 'state-index.json'),
    /** One `<volume id>.json` record per dynamic host volume. */
    volumeRecords: join(client, 'host_volumes'),
    /** One file per volume whose last restore failed. */
    volumeFailures: join(client, 'host_volume_failures'),
    /** One `<volume id>.json` per created volume: the disk it was created on (restore refuses another). */
    volumeDisks: join(client, 'host_volume_disks'),
    /** One `<volume id>.json` per volume whose plugin mounted something: those mounts, by identity (only they are ever unmounted). */
    volumeMounts: join(client, 'host_volume_mounts'),
    /** One claim file per volume name, taken before a create runs. */
    nameClaims: join(client, 'host_volume_names'),
    /** One empty file per volume ID a create of this agent claimed, so gc knows what it may remove. */
    claimedIds: join(client, 'host_volume_ids'),
    /** The lock files that order the agent's work across processes, and their owners' notes. */
    locks: join(client, 'locks'),
    /**
     * Where each process holding the agent lock leaves a note (`owner-*.json`: its PID,
     * command and work) for waiters' messages: beside the locks, so no folder of its own
     * takes a block of a full disk.
     */
    lockOwners: join(client, 'locks'),
    /** One `<name>.json` per namespace applied (Nomad's namespaces table); `default` is there without a file until changed. */
    namespaces: join(client, 'namespaces'),
    /** One `<namespace>.<job id>.json` (each base64url) per registered job: what the servers keep of it. */
    jobs: join(client, 'jobs'),
    /** One `<alloc id>.json` per allocation: its placement, desired status and task events. */
    allocs: join(client, 'allocs'),
    /** Each allocation's own folder (Nomad's `<data_dir>/alloc/<id>`): its task roots, logs and supervisors' notes. */
    allocDirs: join(dataDir, 'alloc'),
  };
}

export type StateLayout = ReturnType<typeof stateLayout>;
