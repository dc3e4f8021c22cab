import type { AgentConfig } from '../config/agent-config.js';
import { hostVolumesObject, staticHostVolumes, type HostVolumeConfig } from './host-volumes.js';
import { describeNode, nodeAttributes } from './node-description.js';
import type { Fingerprint } from './plugins.js';
import type { NodeFacts } from './state/node-facts.js';
import type { HostVolume } from './volume-view.js';

/** The node as `nomad node status -self -json` shows it, cut to what host volumes touch. */
export interface NodeView {
  ID: string;
  Name: string;
  Datacenter: string;
  NodeClass: string;
  NodePool: string;
  Status: 'ready';
  SchedulingEligibility: 'eligible';
  Drain: false;
  /** The host's fingerprinted attributes and the plugins' (`plugins.host_volume.<id>.version`). */
  Attributes: Record<string, string>;
  /** `client.meta` of the agent config. */
  Meta: Record<string, string>;
  /** Task drivers: the simulated agent runs no task, so none. */
  Drivers: Record<string, never>;
  HostVolumes: Record<string, HostVolumeConfig>;
}

export interface NodeStatus {
  node: NodeView;
  /** Plugins the last fingerprint skipped, with the reason. */
  skippedPlugins: Fingerprint['skipped'];
  volumes: HostVolume[];
  warnings: string[];
}

/** The facts of a node that never started: no plugin fingerprinted, only the static host volumes. */
export function unstartedNodeFacts(config: Pick<AgentConfig, 'hostVolumes'>): NodeFacts {
  return {
    fingerprint: { plugins: [], skipped: [], attributes: {} },
    fingerprintedAt: '',
    restoreWarnings: [],
    hostVolumes: staticHostVolumes(config.hostVolumes),
    volumeStates: new Map(),
  };
}

/** The node as the servers see it: attributes from the last fingerprint, `HostVolumes` as the node last reported them. */
export function nodeStatus(config: AgentConfig, nodeId: string, facts: NodeFacts, volumes: HostVolume[]): NodeStatus {
  const node = describeNode(config);
  const shadowed = config.hostVolumes
    .filter((s) => (facts.hostVolumes.get(s.name)?.ID ?? '') !== '')
    .map(
      (s) =>
        `dynamic host volume "${s.name}" (${facts.hostVolumes.get(s.name)!.ID}) replaces the static host volume of the same name at ${s.path}`,
    );
  return {
    node: {
      ID: nodeId,
      Name: node.name,
      Datacenter: node.datacenter,
      NodeClass: node.nodeClass,
      NodePool: node.nodePool,
      Status: 'ready',
      SchedulingEligibility: 'eligible',
      Drain: false,
      Attributes: nodeAttributes(node, facts.fingerprint.attributes),
      Meta: node.meta,
      Drivers: {},
      HostVolumes: hostVolumesObject(facts.hostVolumes),
    },
    skippedPlugins: facts.fingerprint.skipped,
    volumes,
    warnings: [...new Set([...facts.restoreWarnings, ...shadowed])],
  };
}
