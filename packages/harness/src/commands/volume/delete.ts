import { Args, Flags } from '@oclif/core';
import { DhvCommand, agentFlags, openAgent } from '../dhv-command.js';
import { withSpinner } from '../../presenters/spinner.js';
import { nomadSpelling } from './nomad-flags.js';
import { checkVolumeType, typeFlag } from './volume-type.js';

export default class VolumeDelete extends DhvCommand {
  static override summary = 'Delete a dynamic host volume by ID or unique ID prefix, like nomad volume delete.';
  static override description =
    "Runs the plugin's delete (none for a registered volume), removes the volume from client state and from the node's HostVolumes. " +
    'Prints Nomad\'s line: Successfully deleted volume "<id>"!';
  static override examples = [
    '<%= config.bin %> volume delete 1e1d4540',
    '<%= config.bin %> volume delete -type host 1e1d4540',
  ];
  static override args = { id: Args.string({ description: 'Volume ID or a unique prefix of it', required: true }) };
  static override flags = {
    ...agentFlags,
    type: typeFlag,
    force: Flags.boolean({
      description:
        "Nomad's -force: delete from the servers even when the node is gone. The simulated node is always there, so delete runs the plugin as without it.",
      default: false,
    }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(
      VolumeDelete,
      nomadSpelling(this.argv, { json: true, ...VolumeDelete.flags }),
    );
    checkVolumeType(flags.type);
    const agent = await openAgent(flags, (w) => this.warnLine(w));
    const volume = await withSpinner(`Deleting host volume ${args.id}`, agent.deleteVolume(args.id));
    if (this.jsonOutput) return this.printJson({ Deleted: volume.ID, Volume: volume });
    this.print(`Successfully deleted volume "${volume.ID}"!`);
  }
}
