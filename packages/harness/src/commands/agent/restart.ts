import { Flags } from '@oclif/core';
import type { StartReport } from '../../agent/agent.js';
import { DhvCommand, agentFlags, openAgent } from '../dhv-command.js';
import { short } from '../../presenters/format-volume.js';
import { withSpinner } from '../../presenters/spinner.js';

export default class AgentRestart extends DhvCommand {
  static override summary = 'Stop and start the simulated agent: fingerprint plugins and restore every volume from client state.';
  static override description =
    'Each created volume is created again with its saved request, each registered one has its path checked, a few at a time. ' +
    'A volume whose restore fails is left out of HostVolumes (unavailable) and reported; the others are unaffected. ' +
    '--reboot first unmounts everything mounted under the volumes dir and detaches loop devices backed by files there, as a host reboot would.';
  static override examples = ['<%= config.bin %> agent restart', '<%= config.bin %> agent restart --reboot'];
  static override flags = {
    ...agentFlags,
    reboot: Flags.boolean({ description: 'Simulate a host reboot first: unmount what lives under the volumes dir, detach its loop devices.', default: false }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(AgentRestart);
    const agent = await openAgent(flags, () => {});
    const report = await withSpinner('Restarting the agent and restoring volumes', agent.restart({ reboot: flags.reboot }));
    if (this.jsonOutput) return this.printJson(report);
    this.print(restartText(report));
    for (const w of report.warnings) this.warnLine(w);
  }
}

function restartText(report: StartReport): string {
  const lines: string[] = [];
  if (report.reboot) {
    lines.push(`==> Rebooted: unmounted ${report.reboot.unmounted.length} mount(s), detached ${report.reboot.detached.length} loop device(s)`);
    for (const m of report.reboot.unmounted) lines.push(`    unmounted ${m}`);
    for (const d of report.reboot.detached) lines.push(`    detached ${d.device} (${d.backingFile})`);
  }
  lines.push(`==> Agent started on node ${report.nodeId}`);
  lines.push(`==> Plugins: ${report.fingerprint.plugins.map((p) => `${p.id} ${p.version}`).join(', ')}`);
  for (const s of report.fingerprint.skipped) lines.push(`    skipped ${s.id}: ${s.reason}`);
  const total = report.restored.length + report.failed.length;
  lines.push(`==> Restored ${report.restored.length} of ${total} host volume(s)`);
  for (const v of report.restored) lines.push(`  ✓ Host volume "${short(v.ID)}" ${v.Name} ready at ${v.HostPath}`);
  for (const f of report.failed) lines.push(`  ✗ Host volume "${short(f.volume.ID)}" ${f.volume.Name} unavailable: ${f.error.message}`);
  return lines.join('\n');
}
