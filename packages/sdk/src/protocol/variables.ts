import type { Operation } from './operations.js';

/** Every environment variable of the protocol, by the request field it carries (PROTOCOL.md, "Environment variables"). */
export const ENV = {
  operation: 'DHV_OPERATION',
  volumesDir: 'DHV_VOLUMES_DIR',
  pluginDir: 'DHV_PLUGIN_DIR',
  namespace: 'DHV_NAMESPACE',
  volumeName: 'DHV_VOLUME_NAME',
  volumeId: 'DHV_VOLUME_ID',
  nodeId: 'DHV_NODE_ID',
  nodePool: 'DHV_NODE_POOL',
  capacityMinBytes: 'DHV_CAPACITY_MIN_BYTES',
  capacityMaxBytes: 'DHV_CAPACITY_MAX_BYTES',
  parameters: 'DHV_PARAMETERS',
  createdPath: 'DHV_CREATED_PATH',
} as const;

export type RequestField = Exclude<keyof typeof ENV, 'operation'>;
export type EnvName = (typeof ENV)[keyof typeof ENV];

const COMMON = ['volumesDir', 'pluginDir', 'namespace', 'volumeName', 'volumeId', 'nodeId', 'nodePool'] as const;

/** Which request fields the agent sends with each operation, besides DHV_OPERATION. */
export const REQUEST_FIELDS = {
  fingerprint: [],
  create: [...COMMON, 'capacityMinBytes', 'capacityMaxBytes', 'parameters'],
  delete: [...COMMON, 'parameters', 'createdPath'],
} as const satisfies Record<Operation, readonly RequestField[]>;

/** The value of DHV_PARAMETERS when the volume spec has no parameters (Go marshals a nil map as null). */
export const NULL_PARAMETERS = 'null';
