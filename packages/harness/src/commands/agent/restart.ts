import { dhvDocument } from '../../presenters/dhv-document.js';
import { realpath } from 'node:fs/promises';
import { Flags } from '@oclif/core';
import type { StartReport } from '../../agent/agent.js';
import { DhvCommand, agentFlags } from '../dhv-command.js';
import { startReportJson } from '../../presenters/agent-json.js';
import { short } from '../../presenters/format-volume.js';
import { withSpinner } from '../../presenters/spinner.js';

export default class AgentRestart extends DhvCommand {
  static override summary =
    'Stop and start the simulated agent: fingerprint plugins and restore every volume from client state.';
  static override description =
    'Each created volume is created again with its saved request, each registered one has its path checked, all at once under one 50 s deadline, as Nomad does. ' +
    'A volume whose restore fails is left out of HostVolumes and reported; a plugin missing from the plugin dir leaves no dynamic volume reported at all, as on a real agent. ' +
    "--reboot first does to the volumes what a host reboot would: the mounts at and below each created volume's path come off, and the loop " +
    'devices backed by the files its plugin keeps for it in <volumes dir>/.<plugin id>/ are detached. Nothing else under the volumes dir is touched.';
  static override examples = ['<%= config.bin %> agent restart', '<%= config.bin %> agent restart --reboot'];
  static override flags = {
    ...agentFlags,
    reboot: Flags.boolean({
      description: 'Simulate a host reboot first: unmount the volumes, detach their loop devices (nothing foreign).',
      default: false,
    }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(AgentRestart);
    const agent = await this.openAgent(flags, { onWarning: () => {} });
    const report = await withSpinner(
      'Restarting the agent and restoring volumes',
      agent.restart({ reboot: flags.reboot }),
    );
    if (this.jsonOutput) return this.printJson(dhvDocument('RestartReport', startReportJson(report)));
    this.print(restartText(report));
    const volumesDir = agent.config.volumesDir;
    const target = await realpath(volumesDir).catch(() => undefined);
    if (target !== undefined && target !== volumesDir)
      this.warnLine(`the volumes dir ${volumesDir} is a symbolic link to ${target}: volumes are written there`);
    for (const w of report.warnings) this.warnLine(w);
  }
}

function restartText(report: StartReport): string {
  const lines: string[] = [];
  if (report.reboot) {
    lines.push(
      `==> Rebooted: unmounted ${report.reboot.unmounted.length} mount(s), detached ${report.reboot.detached.length} loop device(s)`,
    );
    for (const m of report.reboot.unmounted) lines.push(`    unmounted ${m}`);
    for (const d of report.reboot.detached) lines.push(`    detached ${d.device} (${d.backingFile})`);
    for (const p of report.reboot.skipped)
      lines.push(
        `    left alone ${p}: outside the volumes dir, or reached through a link, so not this agent's to unmount`,
      );
    for (const m of report.reboot.leftMounted) lines.push(`    left mounted ${m}, so not this agent's to unmount`);
  }
  lines.push(`==> Agent started on node ${report.nodeId}`);
  lines.push(`==> Plugins: ${report.fingerprint.plugins.map((p) => `${p.id} ${p.version}`).join(', ')}`);
  for (const s of report.fingerprint.skipped) lines.push(`    skipped ${s.id}: ${s.reason}`);
  const total = report.restored.length + report.failed.length + report.unreadable.length;
  if (report.restoreError)
    lines.push(
      `==> Restore failed: no dynamic host volume is reported (${report.restoreError.message.trim().split('\n').join(' ')})`,
    );
  else lines.push(`==> Restored ${report.restored.length} of ${total} host volume(s)`);
  for (const v of report.restored) {
    const note = report.restoreNotes[v.ID];
    lines.push(`  ✓ Host volume "${short(v.ID)}" ${v.Name} ready at ${v.HostPath}${note ? ` (but ${note})` : ''}`);
  }
  for (const f of report.failed)
    lines.push(`  ✗ Host volume "${short(f.volume.ID)}" ${f.volume.Name} unavailable: ${f.error.message}`);
  for (const u of report.unreadable) lines.push(`  ✗ Host volume "${short(u.id)}" unreadable: ${u.error.message}`);
  return lines.join('\n');
}
