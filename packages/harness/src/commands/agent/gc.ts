import { Agent } from '../../agent/agent.js';
import { dhvDocument } from '../../presenters/dhv-document.js';
import { Flags } from '@oclif/core';
import { EXIT_CODES } from '../../errors/exit-codes.js';
import { DhvCommand, agentFlags, type AgentFlagValues } from '../dhv-command.js';
import { gcText, orphanJson } from '../../presenters/format-orphans.js';

export default class AgentGc extends DhvCommand {
  static override summary =
    'List orphaned volumes (on disk under the volumes dir, unknown to client state), and remove them with --remove.';
  static override description =
    'A create cut short after its plugin ran and before client state was written (the dhv process killed, the host crashed) leaves a volume ' +
    'that nothing restores or deletes. gc finds them by what plugins leave in the volumes dir (<volumes dir>/<volume id>, and files named by ' +
    "volume ID in a plugin's hidden folder <volumes dir>/.<plugin id>/) and removes each with the delete of the plugin that made it, " +
    "after checking, under the volume name's lock, that no create running elsewhere is about to record it.";
  static override examples = [
    '<%= config.bin %> agent gc',
    '<%= config.bin %> agent gc --remove',
    '<%= config.bin %> agent gc --remove --id 3c9d2b1a',
    '<%= config.bin %> agent gc --json',
  ];
  static override flags = {
    ...agentFlags,
    remove: Flags.boolean({
      description: "Remove the orphans (all, or those named by --id) with their plugin's delete.",
      default: false,
    }),
    id: Flags.string({
      description: 'Only the orphan with this volume ID or ID prefix (repeatable).',
      multiple: true,
      multipleNonGreedy: true,
    }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(AgentGc);
    // Not openAgent: gc never makes a data dir or a node ID, and one that is not there claimed nothing.
    const config = await this.agentConfig(flags);
    const report = await Agent.orphansOf(config).collect({ remove: flags.remove, ids: flags.id ?? [] });
    const again = removeCommand(this.config.bin, flags);
    if (this.jsonOutput) {
      this.printJson(
        dhvDocument('GcReport', {
          VolumesDir: report.volumesDir,
          VolumesDirTarget: report.volumesDirTarget ?? '',
          FreeLocks: report.freeLocks,
          Orphans: report.orphans.map((o) => orphanJson(o, again)),
          Removed: report.removed,
          Failed: report.failed.map((f) => ({ ID: f.id, Error: f.error.toJSON() })),
        }),
      );
    } else {
      this.print(gcText(report, flags.remove, again));
    }
    if (report.failed.length > 0) this.exit(EXIT_CODES.failed);
  }
}

/** The command that removes them, with the agent flags this run was given, ready to paste. */
function removeCommand(bin: string, flags: AgentFlagValues): string {
  const parts = [bin, 'agent', 'gc', '--remove'];
  for (const name of ['data-dir', 'config', 'plugin-dir', 'volumes-dir'] as const) {
    const value = flags[name];
    if (value !== undefined)
      parts.push(`--${name}`, /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`);
  }
  return parts.join(' ');
}
