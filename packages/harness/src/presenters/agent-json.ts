import type { StartReport } from '../agent/agent.js';
import type { Fingerprint } from '../agent/plugins.js';

/**
 * The `--json` of `agent fingerprint` and `agent restart`, in one casing: Nomad's API
 * casing (PascalCase, Go's initialisms: `ID`, `PluginID`, `NodeID`) at every level, as
 * volume and node JSON already are. Maps keep their keys (attribute names); errors keep
 * dhv's error shape `{code, message}` (docs/nomad-differences.md, "JSON").
 */
export function fingerprintJson(fingerprint: Fingerprint) {
  return {
    Attributes: fingerprint.attributes,
    Plugins: fingerprint.plugins.map((p) => ({
      ID: p.id,
      Version: p.version,
      Builtin: p.builtin,
      Executable: p.executable,
      Stderr: p.stderr ?? '',
      Warnings: p.warnings ?? [],
    })),
    Skipped: fingerprint.skipped.map((s) => ({
      ID: s.id,
      Executable: s.executable ?? '',
      Reason: s.reason,
      Stderr: s.stderr ?? '',
      ...(s.logged ? { Logged: logLineJson(s.logged) } : {}),
    })),
    Logs: (fingerprint.logs ?? []).map(logLineJson),
    ...(fingerprint.nomadCrash
      ? { NomadCrash: { PluginID: fingerprint.nomadCrash.pluginId, Panic: fingerprint.nomadCrash.panic } }
      : {}),
  };
}

type LogLine = NonNullable<Fingerprint['logs']>[number];

function logLineJson(line: LogLine) {
  return {
    Level: line.level,
    Message: line.message,
    ...(line.error !== undefined ? { Error: line.error } : {}),
    ...(line.dir !== undefined ? { Dir: line.dir } : {}),
  };
}

export function startReportJson(report: StartReport) {
  return {
    NodeID: report.nodeId,
    Fingerprint: fingerprintJson(report.fingerprint),
    Restored: report.restored,
    RestoreNotes: report.restoreNotes,
    Failed: report.failed.map((f) => ({ Volume: f.volume, Error: f.error })),
    Unreadable: report.unreadable.map((u) => ({ ID: u.id, File: u.file, Error: u.error })),
    ...(report.restoreError ? { RestoreError: report.restoreError } : {}),
    Warnings: report.warnings,
    ...(report.reboot
      ? {
          Reboot: {
            Unmounted: report.reboot.unmounted,
            Detached: report.reboot.detached.map((d) => ({ Device: d.device, BackingFile: d.backingFile })),
            Skipped: report.reboot.skipped,
          },
        }
      : {}),
  };
}
