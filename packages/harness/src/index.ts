export * from './conformance/index.js';

/** The simulated Nomad client agent: config, volume specs, client state, restore, reboot. */
export { Agent, type AgentOptions, type NodeView, type NodeStatus, type StartReport } from './agent/agent.js';
export { AgentError, type AgentErrorCode } from './agent/errors.js';
export { loadAgentConfig, parseClientConfig, type AgentConfig, type AgentConfigInput, type StaticHostVolume } from './config/agent-config.js';
export { readVolumeSpec, validateVolumeSpec, type VolumeSpec, type Capability, type Constraint } from './spec/volume-spec.js';
export { ClientState, type VolumeRecord, type ClientCreateRequest } from './agent/client-state.js';
export { buildHostVolumes, type HostVolumeConfig } from './agent/host-volumes.js';
export { restoreVolumes, defaultRestoreConcurrency, type RestoreReport } from './agent/restore.js';
export { simulateReboot, type RebootReport, type RebootScope } from './agent/reboot.js';
export { fingerprintPlugins, lookupPlugin, type Fingerprint } from './agent/plugins.js';
export { runPluginOnce, type PluginRunInput, type PluginRunOutcome } from './agent/run-plugin-once.js';
export { findOrphans, removeOrphan, collectOrphans, OrphanError, type Orphan, type OrphanKind, type GcReport } from './agent/orphans.js';
export type { HostVolume, VolumeState } from './agent/volume-view.js';
export { runSeedStory, type DemoReport } from './demo/seed-story.js';
