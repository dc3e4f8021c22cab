import type { PluginRunner } from '@dhv/sdk/client';
import type { AgentConfig } from '../config/agent-config.js';
import type { Allocation } from './allocations/alloc-status.js';
import type { VolumeManager } from './client/host-volume-manager.js';
import type { Namespaces } from './namespaces.js';
import type { ClientState } from './state/client-state.js';
import type { NodeFacts } from './state/node-facts.js';
import type { AgentStore } from './state/store.js';

/**
 * What an Agent's operations (volume-upsert.ts, volume-delete.ts, volume-reads.ts,
 * node-report.ts) work with: the agent's store and runner, its node, and its shutdown
 * signal. The Agent builds one for each call, so the signal is always the current start's.
 */
export interface AgentParts {
  config: AgentConfig;
  nodeId: string;
  store: AgentStore;
  /** Client state as the agent reads it (the host volume manager's may be wrapped by a test). */
  state: ClientState;
  runner: PluginRunner;
  /** Aborted when the agent shuts down. */
  signal: AbortSignal;
  /** The client's host volume manager, wired to this agent. */
  manager: () => VolumeManager;
  /** What the node last reported; an agent that never started starts first. */
  facts: () => Promise<NodeFacts>;
  namespaces: () => Namespaces;
  /** Nomad's usage claims of a volume (allocations/). */
  volumeUsers: (volume: { Name: string; NodeID: string }) => Promise<Allocation[]>;
  warn: (message: string) => void;
}
