import type { VolumeSpec } from '../volume-specs/volume-spec.js';

/** A dynamic host volume spec named `v` for plugin `p`, every other field empty, with `fields` on top. */
export function volumeSpec(fields: Partial<VolumeSpec> = {}): VolumeSpec {
  return {
    type: 'host',
    id: '',
    name: 'v',
    namespace: 'default',
    pluginId: 'p',
    nodeId: '',
    nodePool: '',
    capacityMinBytes: 0n,
    capacityMaxBytes: 0n,
    capacityBytes: 0n,
    hostPath: '',
    parameters: null,
    capabilities: [],
    constraints: [],
    ...fields,
  };
}
