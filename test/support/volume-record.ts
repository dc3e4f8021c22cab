import type { VolumeRecord } from '../../packages/harness/src/agent/state/client-state.js';

/**
 * A client-state record as a create on the built-in mkdir leaves it, with a capacity request
 * past 2^53 (the store must keep int64s exact): for the tests of the store and of its readers.
 */
export function sampleRecord(id: string, overrides: Partial<VolumeRecord['CreateReq']> = {}): VolumeRecord {
  return {
    ID: id,
    HostPath: `/srv/volumes/${id}`,
    CreateReq: {
      ID: id,
      Name: `vol-${id.slice(0, 8)}`,
      PluginID: 'mkdir',
      Namespace: 'default',
      NodeID: 'ae118273-5416-3ed7-01dd-10fe8bf49e81',
      RequestedCapacityMinBytes: 2n ** 62n + 1n,
      RequestedCapacityMaxBytes: 0n,
      Parameters: { mode: '0755' },
      ...overrides,
    },
    Volume: {
      NodePool: 'default',
      CapacityBytes: 49_283_072n,
      RequestedCapabilities: [{ AccessMode: 'single-node-writer', AttachmentMode: 'file-system' }],
      Constraints: [],
      CreateTime: '2024-12-05T22:06:46.000Z',
      ModifyTime: '2024-12-05T22:06:46.000Z',
    },
  };
}
