export * from './conformance/index.js';

/** The simulated Nomad client agent: config, volume specs, client state, restore, reboot. */
export { Agent, type AgentOptions, type NodeView, type NodeStatus, type StartReport } from './agent/agent.js';
export { AgentError, type AgentErrorCode } from './errors/agent-error.js';
export { DhvError, UsageError } from './errors/dhv-error.js';
export { EXIT_CODES, type ExitCode } from './errors/exit-codes.js';
export { DEFAULT_DATA_DIR, dataDirLayout, type DataDirLayout } from './config/data-dir.js';
export {
  loadAgentConfig,
  parseClientConfig,
  type AgentConfig,
  type AgentConfigInput,
  type StaticHostVolume,
} from './config/agent-config.js';
export {
  readVolumeSpec,
  validateVolumeSpec,
  type VolumeSpec,
  type Capability,
  type Constraint,
} from './volume-specs/volume-spec.js';
export { ClientState, type VolumeRecord, type ClientCreateRequest } from './agent/state/client-state.js';
export { AgentStore } from './agent/state/store.js';
export {
  applyHostVolumeUpdates,
  hostVolumesObject,
  staticHostVolumes,
  type HostVolumeConfig,
  type HostVolumeMap,
} from './agent/host-volumes.js';
export { DEFAULT_RESTORE_DEADLINE_MS } from './agent/restore.js';
export { VolumeManager } from './agent/client/host-volume-manager.js';
export type { RestoreOutcome } from './agent/client/volume-restore.js';
export type { AgentLogLine } from './agent/client/volume-manager-context.js';
export type { RebootReport, RebootScope } from './agent/reboot.js';
export { builtinFirst, fingerprintPlugins, isBuiltinPlugin, type Fingerprint } from './agent/plugins.js';
export { builtinMkdirRunner } from './agent/builtin-mkdir-runner.js';
export { processRunner } from './runner/process-runner.js';
export { runPluginOnce, type PluginRunInput, type PluginRunOnce, type RawExit } from './agent/run-plugin-once.js';
export { OrphanCollector, OrphanError, type Orphan, type OrphanKind, type GcReport } from './agent/orphans.js';
export type { HostVolume, VolumeState } from './agent/volume-view.js';
export { runSeedStory, type DemoReport } from './demo/seed-story.js';
