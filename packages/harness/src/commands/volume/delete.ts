import { dhvDocument } from '../../presenters/dhv-document.js';
import { Args, Flags } from '@oclif/core';
import { isUuid } from '@dhv/sdk';
import { DhvCommand, agentFlags } from '../dhv-command.js';
import { withSpinner } from '../../presenters/spinner.js';
import { findVolume } from './find-volume.js';
import { namespaceFlag } from './namespace.js';
import { nomadSpelling } from './nomad-flags.js';
import { checkVolumeType, typeFlag } from './volume-type.js';

export default class VolumeDelete extends DhvCommand {
  static override summary =
    'Delete a dynamic host volume by ID or name, or a unique prefix of either, like nomad volume delete.';
  static override description =
    "Runs the plugin's delete (none for a registered volume), removes the volume from client state and from the node's HostVolumes. " +
    'Prints Nomad\'s line: Successfully deleted volume "<id>"!';
  static override examples = [
    '<%= config.bin %> volume delete 1e1d4540',
    '<%= config.bin %> volume delete -type host 1e1d4540',
  ];
  static override args = {
    id: Args.string({ description: 'Volume ID or name, or a unique prefix of either', required: true }),
  };
  static override flags = {
    ...agentFlags,
    type: typeFlag,
    namespace: namespaceFlag,
    force: Flags.boolean({
      description:
        "Nomad's -force: forget the volume even when its node is gone. The simulated node is never gone, so the plugin's delete runs as without it (as Nomad's does for a live node), and dhv says so.",
      default: false,
    }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(
      VolumeDelete,
      nomadSpelling(this.argv, { json: true, ...VolumeDelete.flags }),
    );
    checkVolumeType(flags.type);
    const agent = await this.openAgent(flags);
    // As Nomad's CLI: a whole ID goes to the servers as it is (`no such volume: <id>`), anything else is looked up by prefix.
    const id = isUuid(args.id)
      ? args.id
      : (await findVolume(agent, args.id, flags.namespace, { command: 'delete' })).ID;
    if (flags.force) this.warnLine(FORCE_NOTE);
    const volume = await withSpinner(`Deleting host volume ${id}`, agent.deleteVolume(id, flags.namespace));
    if (this.jsonOutput)
      return this.printJson(
        dhvDocument('VolumeDeleteResult', {
          Deleted: volume.ID,
          Volume: volume,
          ...(flags.force ? { Notes: [FORCE_NOTE] } : {}),
        }),
      );
    this.print(`Successfully deleted volume "${volume.ID}"!`);
  }
}

/** -force changes nothing while the node is up, in Nomad too: said, so that nobody expects it to skip the plugin. */
export const FORCE_NOTE =
  "-force only matters when the volume's node is gone (Nomad then forgets the volume without its plugin); the simulated node is always up, so the plugin's delete ran as without -force";
