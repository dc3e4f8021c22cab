import { Flags } from '@oclif/core';
import { collectOrphans, type GcReport, type Orphan } from '../../agent/orphans.js';
import { DhvCommand, agentConfigFrom, agentFlags, type AgentFlagValues } from '../../cli-output/dhv-command.js';
import { short } from '../../cli-output/format-volume.js';

export default class AgentGc extends DhvCommand {
  static override summary = 'List orphaned volumes (on disk under the volumes dir, unknown to client state), and remove them with --remove.';
  static override description =
    'A create cut short after its plugin ran and before client state was written (the dhv process killed, the host crashed) leaves a volume ' +
    'that nothing restores or deletes. gc finds them by what plugins leave in the volumes dir (<volumes dir>/<volume id>, and files named by ' +
    'volume ID in a plugin\'s hidden folder <volumes dir>/.<plugin id>/) and removes each with the delete of the plugin that made it, ' +
    'after checking, under the volume name\'s lock, that no create running elsewhere is about to record it.';
  static override examples = [
    '<%= config.bin %> agent gc',
    '<%= config.bin %> agent gc --remove',
    '<%= config.bin %> agent gc --remove --id 3c9d2b1a',
    '<%= config.bin %> agent gc --json',
  ];
  static override flags = {
    ...agentFlags,
    remove: Flags.boolean({ description: 'Remove the orphans (all, or those named by --id) with their plugin\'s delete.', default: false }),
    id: Flags.string({ description: 'Only the orphan with this volume ID or ID prefix (repeatable).', multiple: true }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(AgentGc);
    this.jsonOutput = flags.json;
    const config = await agentConfigFrom(flags);
    const report = await collectOrphans(config, { remove: flags.remove, ids: flags.id ?? [] });
    const again = removeCommand(this.config.bin, flags);
    if (this.jsonOutput) {
      this.printJson({
        VolumesDir: report.volumesDir,
        VolumesDirTarget: report.volumesDirTarget ?? '',
        FreeLocks: report.freeLocks,
        Orphans: report.orphans.map((o) => orphanJson(o, again)),
        Removed: report.removed,
        Failed: report.failed.map((f) => ({ ID: f.id, Error: f.error.toJSON() })),
      });
    } else {
      this.print(gcText(report, flags.remove, again));
    }
    if (report.failed.length > 0) this.exit(1);
  }
}

function orphanJson(o: Orphan, again: string) {
  return {
    ID: o.id,
    Name: o.name ?? '',
    Kind: o.kind,
    Paths: o.paths,
    PluginID: o.plugin ?? '',
    Blocker: o.blocker ?? '',
    RemoveCommand: o.blocker ? '' : `${again} --id ${o.id}`,
  };
}

function gcText(report: GcReport, removing: boolean, again: string): string {
  const head: string[] = [];
  if (report.volumesDirTarget) head.push(`==> The volumes dir ${report.volumesDir} is a symbolic link to ${report.volumesDirTarget}`);
  if (report.freeLocks.length > 0) {
    head.push(`==> ${report.freeLocks.length} lock file(s) left by killed holders${removing ? ' could not be removed' : `; ${again} removes them`}:`);
    for (const lock of report.freeLocks) head.push(`      ${lock}`);
  }
  if (report.orphans.length === 0) return [...head, `==> No orphaned volumes in ${report.volumesDir}: everything on disk is in client state`].join('\n');
  const lines = [...head, `==> ${report.orphans.length} orphaned volume(s) in ${report.volumesDir} (on disk, unknown to client state)`];
  const failed = new Map(report.failed.map((f) => [f.id, f.error]));
  for (const o of report.orphans) {
    const status = !removing ? '' : report.removed.includes(o.id) ? '  ✓ removed' : failed.has(o.id) ? '  ✗ not removed' : '  (recorded meanwhile, kept)';
    lines.push(`  ${short(o.id)}  ${o.kind}${o.name ? `, name "${o.name}"` : ''}${o.plugin ? `, plugin ${o.plugin}` : ''}${status}`);
    for (const p of o.paths) lines.push(`      ${p}`);
    if (failed.has(o.id)) lines.push(`      ${failed.get(o.id)!.message}`);
    else if (o.blocker) lines.push(`      cannot be removed by gc: ${o.blocker}`);
    else if (!removing) lines.push(`      remove it: ${again} --id ${o.id}`);
  }
  if (!removing) lines.push(`==> Remove them all: ${again}`);
  else lines.push(`==> Removed ${report.removed.length} of ${report.orphans.length}`);
  return lines.join('\n');
}

/** The command that removes them, with the agent flags this run was given, ready to paste. */
function removeCommand(bin: string, flags: AgentFlagValues): string {
  const parts = [bin, 'agent', 'gc', '--remove'];
  for (const name of ['data-dir', 'config', 'plugin-dir', 'volumes-dir'] as const) {
    const value = flags[name];
    if (value !== undefined) parts.push(`--${name}`, /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`);
  }
  return parts.join(' ');
}
