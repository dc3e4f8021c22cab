import { availableParallelism } from 'node:os';
import { stat } from 'node:fs/promises';
import { BUILTIN_MKDIR_ID, PluginError } from '@dhv/sdk/client';
import type { AgentConfig } from '../config/agent-config.js';
import { isRegistered, type VolumeRecord } from './client-state.js';
import { AgentError } from './errors.js';
import { lookupPlugin } from './plugins.js';
import { createRequestFor } from './plugin-requests.js';
import { mapWithConcurrency } from './pool.js';

export interface RestoredVolume {
  record: VolumeRecord;
  /** The path the plugin returned this time (normally the saved one). */
  path: string;
}

export interface FailedRestore {
  record: VolumeRecord;
  error: Error & { code?: string };
}

export interface RestoreReport {
  restored: RestoredVolume[];
  failed: FailedRestore[];
  warnings: string[];
}

export interface RestoreOptions {
  /** How many plugin processes run at once. Default: twice the cores. */
  concurrency?: number;
  signal: AbortSignal;
}

/** Built-in and registered volumes cost a stat or a mkdir, not a process: they get a wider pool. */
const IN_PROCESS_CONCURRENCY = 64;

export function defaultRestoreConcurrency(): number {
  return availableParallelism() * 2;
}

/**
 * Restores every volume in client state as the agent does on start (PROTOCOL.md,
 * "Restore on restart"): create again with the saved request, or check the path of a
 * registered volume. Unlike Nomad, which starts them all at once, plugin runs are
 * bounded. A failure leaves only that volume out.
 */
export async function restoreVolumes(records: readonly VolumeRecord[], config: AgentConfig, options: RestoreOptions): Promise<RestoreReport> {
  const inProcess = records.filter(runsInProcess);
  const external = records.filter((r) => !runsInProcess(r));
  const restoreOne = async (record: VolumeRecord): Promise<RestoredVolume | FailedRestore> => {
    try {
      return { record, path: await restoreVolume(record, config, options.signal) };
    } catch (err) {
      return { record, error: err as FailedRestore['error'] };
    }
  };
  const outcomes = (
    await Promise.all([
      mapWithConcurrency(inProcess, IN_PROCESS_CONCURRENCY, restoreOne),
      mapWithConcurrency(external, options.concurrency ?? defaultRestoreConcurrency(), restoreOne),
    ])
  ).flat();
  const restored = outcomes.filter((o): o is RestoredVolume => 'path' in o).sort(byId);
  const failed = outcomes.filter((o): o is FailedRestore => 'error' in o).sort(byId);
  return { restored, failed, warnings: warningsFor(restored, failed) };
}

function runsInProcess(record: VolumeRecord): boolean {
  return isRegistered(record) || record.CreateReq.PluginID === BUILTIN_MKDIR_ID;
}

async function restoreVolume(record: VolumeRecord, config: AgentConfig, signal: AbortSignal): Promise<string> {
  if (isRegistered(record)) {
    try {
      await stat(record.HostPath);
    } catch (err) {
      throw new AgentError('HOST_PATH_MISSING', `registered volume "${record.ID}": host path ${record.HostPath} no longer exists (${(err as NodeJS.ErrnoException).code})`, {
        volumeId: record.ID,
        hostPath: record.HostPath,
      });
    }
    return record.HostPath;
  }
  const plugin = await lookupPlugin(config.pluginDir, record.CreateReq.PluginID);
  const result = await plugin.create(createRequestFor(record, config), signal);
  return result.path;
}

function warningsFor(restored: RestoredVolume[], failed: FailedRestore[]): string[] {
  const warnings: string[] = [];
  for (const r of restored) {
    if (r.path !== r.record.HostPath) {
      warnings.push(`volume "${r.record.ID}" came back at ${r.path}, not at its saved path ${r.record.HostPath}: its plugin's create is not idempotent`);
    }
  }
  const missing = failed.filter((f) => f.error instanceof PluginError && f.error.code === 'PLUGIN_NOT_FOUND');
  if (missing.length > 0) {
    const plugins = [...new Set(missing.map((f) => f.record.CreateReq.PluginID))].map((p) => `"${p}"`).join(', ');
    const total = restored.length + failed.length;
    warnings.push(
      `plugin ${plugins} is missing from the plugin directory: a real Nomad agent would fail the whole restore and report none of its ${total} volumes; ` +
        `this agent left out only the ${failed.length} that failed and kept the other ${restored.length}. Put the plugin back before restarting a real agent`,
    );
  }
  return warnings;
}

function byId(a: { record: VolumeRecord }, b: { record: VolumeRecord }): number {
  return a.record.ID < b.record.ID ? -1 : a.record.ID > b.record.ID ? 1 : 0;
}
