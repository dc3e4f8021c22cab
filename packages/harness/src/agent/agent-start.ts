import type { PluginRunner } from '@dhv/sdk/client';
import type { AgentConfig, StaticHostVolume } from '../config/agent-config.js';
import { AgentError } from '../errors/agent-error.js';
import type { VolumeRecord } from './state/client-state.js';
import { applyHostVolumeUpdates, staticHostVolumes, type HostVolumeUpdate } from './host-volumes.js';
import type { VolumeState } from './state/node-facts.js';
import type { AgentStore } from './state/store.js';
import { statesAfterNodeUpdate } from './servers/volume-states.js';
import { fingerprintPlugins, type Fingerprint } from './plugins.js';
import type { RebootReport } from './reboot.js';
import { DEFAULT_RESTORE_DEADLINE_MS, restoreWarnings } from './restore.js';
import type { VolumeFailure } from './state/volume-health.js';
import type { RestoreOutcome } from './client/volume-restore.js';
import { toHostVolume, type HostVolume } from './volume-view.js';

/**
 * An agent's start, as a real agent's: fingerprint the plugins, restore every volume from
 * client state at once under one deadline, and report the static volumes plus what restore
 * returned (nothing dynamic if restore failed as a whole).
 */

export interface StartReport {
  nodeId: string;
  fingerprint: Fingerprint;
  restored: HostVolume[];
  /** What must be said on a restored volume's line, by volume ID (a folder made again on another filesystem). */
  restoreNotes: Record<string, string>;
  failed: Array<{ volume: HostVolume; error: { code: string; message: string } }>;
  /** Volumes whose client state file does not load: each left out alone, its error naming the file and the fix. */
  unreadable: Array<{ id: string; file: string; error: { code: string; message: string } }>;
  /** Restore failed as a whole (a plugin missing, state unreadable): the node reports no dynamic volume. */
  restoreError?: { code: string; message: string };
  warnings: string[];
  reboot?: RebootReport;
}

export interface StartOptions {
  /** This start's restore deadline (default: the agent's). */
  restoreDeadlineMs?: number;
  /** Static host volumes for this start (default: the agent config's). */
  staticVolumes?: readonly StaticHostVolume[];
}

/** What a start needs of its agent. */
export interface StartingAgent {
  config: AgentConfig;
  nodeId: string;
  store: AgentStore;
  runner: PluginRunner;
  /** The agent's shutdown: a start it aborts fails with AGENT_SHUT_DOWN. */
  signal: AbortSignal;
  restore: (deadlineMs: number) => Promise<RestoreOutcome>;
  /** The agent's restore deadline (default: Nomad's 50 s). */
  restoreDeadlineMs: number | undefined;
  warn: (message: string) => void;
}

export async function startHeld(agent: StartingAgent, options: StartOptions): Promise<StartReport> {
  await agent.store.sweep();
  const fingerprint = await fingerprintPlugins(agent.runner, agent.config.pluginDir, agent.signal);
  for (const w of fingerprint.warnings ?? []) agent.warn(w);
  const outcome = await agent.restore(
    options.restoreDeadlineMs ?? agent.restoreDeadlineMs ?? DEFAULT_RESTORE_DEADLINE_MS,
  );
  await agent.store.saveIndex();
  if (agent.signal.aborted) {
    throw new AgentError(
      'AGENT_SHUT_DOWN',
      'the agent shut down while restoring volumes; start it again to restore them',
    );
  }
  const updates: HostVolumeUpdate[] = outcome.error ? [] : outcome.updates;
  const { hostVolumes, warnings: overrides } = applyHostVolumeUpdates(
    staticHostVolumes(options.staticVolumes ?? agent.config.hostVolumes),
    updates,
  );
  const warnings = [...restoreWarnings(outcome), ...overrides];
  const at = new Date().toISOString();
  const failures = new Map<string, VolumeFailure>();
  for (const f of outcome.failed)
    failures.set(f.record.ID, { error: f.error.message, code: f.error.code ?? 'UNKNOWN', at });
  const records = outcome.error
    ? await agent.store.records.list().catch(() => [] as VolumeRecord[])
    : outcome.restored.map((r) => r.record).concat(outcome.failed.map((f) => f.record));
  await agent.store.health.replaceAll(failures);
  const facts = await agent.store.updateNodeFacts((previous) => ({
    fingerprint,
    fingerprintedAt: at,
    restoredAt: at,
    restoreWarnings: warnings,
    hostVolumes,
    volumeStates: statesAfterNodeUpdate(previous?.volumeStates ?? new Map(), records.map(serverKey), hostVolumes),
  }));
  for (const w of warnings) agent.warn(w);
  // A state file that does not load stops dhv loudly, after doing what Nomad does (no dynamic volume published).
  if (
    outcome.error instanceof AgentError &&
    (outcome.error.code === 'STATE_CORRUPT' || outcome.error.code === 'STATE_UNREADABLE')
  )
    throw outcome.error;
  const stateOf = (id: string) => facts.volumeStates.get(id) ?? 'pending';
  return reportOf(agent.nodeId, fingerprint, outcome, { failures, stateOf, warnings });
}

/** What a start reports: each volume restored, failed or unreadable, with the node's state of it. */
function reportOf(
  nodeId: string,
  fingerprint: Fingerprint,
  outcome: RestoreOutcome,
  {
    failures,
    stateOf,
    warnings,
  }: { failures: ReadonlyMap<string, VolumeFailure>; stateOf: (id: string) => VolumeState; warnings: string[] },
): StartReport {
  return {
    nodeId: nodeId,
    fingerprint,
    restored: outcome.restored.map((r) => toHostVolume({ ...r.record, HostPath: r.path }, stateOf(r.record.ID))),
    restoreNotes: Object.fromEntries(outcome.restored.flatMap((r) => (r.note ? [[r.record.ID, r.note]] : []))),
    failed: outcome.failed.map((f) => ({
      volume: toHostVolume(f.record, stateOf(f.record.ID), failures.get(f.record.ID)),
      error: { code: f.error.code ?? 'UNKNOWN', message: f.error.message },
    })),
    unreadable: outcome.damaged.map((d) => ({
      id: d.id,
      file: d.file,
      error: { code: d.error.code, message: d.error.message },
    })),
    ...(outcome.error
      ? { restoreError: { code: outcome.error.code ?? 'UNKNOWN', message: outcome.error.message } }
      : {}),
    warnings,
  };
}

/** The servers' key of a volume: its ID and name. */
export function serverKey(record: VolumeRecord): { ID: string; Name: string } {
  return { ID: record.ID, Name: record.CreateReq.Name };
}
