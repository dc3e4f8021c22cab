import { AGENT_RESTORE_DEADLINE_MS } from '@dhv/sdk';
import type { RestoreOutcome } from './client/volume-restore.js';

/** Nomad's: restore shares one deadline, counted from its start (a test may shorten it). */
export const DEFAULT_RESTORE_DEADLINE_MS = AGENT_RESTORE_DEADLINE_MS;

/**
 * What a user must hear about a restore, beyond the log lines: a missing plugin (which
 * hid every dynamic volume, as it does on a real agent), and a plugin whose create came
 * back at another path than the first (the node now reports that path, client state and
 * the servers keep the first, and delete will be handed the first).
 */
export function restoreWarnings(outcome: RestoreOutcome): string[] {
  const warnings: string[] = [];
  const missing = outcome.failed.filter(
    (f) => (f.error as { code?: string }).code === 'PLUGIN_NOT_FOUND' && f.record.CreateReq.PluginID !== '',
  );
  if (outcome.error && missing.length > 0) {
    const plugins = [...new Set(missing.map((f) => f.record.CreateReq.PluginID))].map((p) => `"${p}"`).join(', ');
    const volumes = missing.map((f) => `${f.record.ID} (${f.record.CreateReq.Name})`).join(', ');
    warnings.push(
      `failed to restore state: ${outcome.error.message.trim()}\n` +
        `The plugin ${plugins} of volume ${volumes} is missing from the plugin directory. A real Nomad agent then reports NO dynamic host volume ` +
        `at all (static ones only), though it ran every other volume's create and keeps their names claimed; this agent did the same. ` +
        `Put the plugin back in the plugin directory and run dhv agent restart (or delete the volume on the servers' side).`,
    );
  } else if (outcome.error) {
    warnings.push(
      `failed to restore state: ${outcome.error.message.trim()}\nThe node reports no dynamic host volume until a restart restores them.`,
    );
  }
  for (const r of outcome.restored) {
    if (r.path !== r.record.HostPath) {
      warnings.push(
        `volume "${r.record.ID}" came back at ${r.path}, not at its saved path ${r.record.HostPath}: its plugin's create is not idempotent. ` +
          `The node reports the new path; client state and the servers keep the first, and delete is handed the first`,
      );
    }
  }
  return warnings;
}
