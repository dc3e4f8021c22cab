import type { InstallResult, RemoveResult } from '../record/install-recorder.js';
import type { ReplayReport } from '../record/replay.js';

/** `dhv record`: where the calls go, where the plugin is kept, how to put it back. */
export function recordText(result: InstallResult, bin: string): string {
  const lines = [
    ...result.cleared.map((path) => `Cleared ${path}, left by a dhv record that did not finish`),
    `Recording ${result.pluginId}: each call is appended to ${result.log}`,
    `The plugin itself is kept at ${result.original}; \`${bin} record --remove ${result.pluginPath}\` puts it back.`,
  ];
  return lines.join('\n');
}

/** `dhv record --remove`: what was put back, and where the recorded calls stay. */
export function removeText(result: RemoveResult): string {
  const lines = result.cleared.map((path) => `Cleared ${path}, left by a dhv record that did not finish`);
  if (result.outcome === 'restored') lines.push(`Restored ${result.pluginPath}: the plugin is back, unchanged`);
  else if (result.outcome === 'finished-interrupted') lines.push(`${result.pluginPath} is the plugin itself again`);
  else lines.push(`${result.pluginPath} is not being recorded; nothing to do`);
  if (result.log !== undefined) lines.push(`The recorded calls stay in ${result.log}`);
  return lines.join('\n');
}

/** `dhv replay`: one line for the whole run, then each call that answered differently. */
export function replayText(report: ReplayReport): string {
  const lines = [
    `Replayed ${report.calls} call(s) of ${report.pluginId} against ${report.plugin}: ` +
      `${report.same} same, ${report.differ} differ`,
    `The plugin ran ${seconds(report.pluginMs)}` +
      (report.recordedMs === null ? '' : `; when recorded, ${seconds(report.recordedMs)}`),
  ];
  const others = Object.entries(report.otherPlugins);
  if (others.length > 0)
    lines.push(`Left out: ${others.map(([id, n]) => `${n} call(s) of ${id}`).join(', ')} (--id names another plugin)`);
  for (const skipped of report.skipped) lines.push(`Skipped ${skipped}`);
  for (const call of report.differing) {
    const volume = call.volumeId ? ` ${call.volumeId}` : '';
    lines.push('', `Call ${call.index} (${call.where}): ${call.operation}${volume}`);
    for (const d of call.differences) {
      lines.push(`  ${d.field}:`, `    recorded: ${oneLine(d.recorded)}`, `    replayed: ${oneLine(d.replayed)}`);
    }
  }
  for (const problem of report.cleanupProblems) lines.push(`warning: the sandbox was not fully removed: ${problem}`);
  return lines.join('\n');
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

function oneLine(text: string): string {
  return JSON.stringify(text);
}
