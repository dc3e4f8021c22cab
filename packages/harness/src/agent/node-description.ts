import { hostname } from 'node:os';
import type { AgentConfig } from '../config/agent-config.js';
import { hostAttributes } from './host-attributes.js';

/** What the node says about itself besides its plugins and volumes: from the agent config, with Nomad's defaults. */
export interface NodeDescription {
  /** `name`; default: the host name. */
  name: string;
  /** `datacenter`; default: dc1. */
  datacenter: string;
  /** `client.node_class`; default: empty. */
  nodeClass: string;
  nodePool: string;
  /** `client.meta`. */
  meta: Record<string, string>;
  /** The host's fingerprinted attributes (kernel, OS, CPU, ...), without the plugins'. */
  hostAttributes: Record<string, string>;
}

export const DEFAULT_DATACENTER = 'dc1';

export function describeNode(config: AgentConfig): NodeDescription {
  return {
    name: config.node?.name ?? hostname(),
    datacenter: config.node?.datacenter ?? DEFAULT_DATACENTER,
    nodeClass: config.node?.nodeClass ?? '',
    nodePool: config.nodePool,
    meta: { ...(config.node?.meta ?? {}) },
    hostAttributes: hostAttributes(),
  };
}

/** The node's Attributes: the host's, then the plugins' fingerprints (`plugins.host_volume.<id>.version`). */
export function nodeAttributes(
  description: Pick<NodeDescription, 'hostAttributes'> | undefined,
  pluginAttributes: Record<string, string>,
): Record<string, string> {
  return { ...(description?.hostAttributes ?? {}), ...pluginAttributes };
}
