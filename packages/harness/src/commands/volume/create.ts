import { dhvDocument } from '../../presenters/dhv-document.js';
import { Args, Flags } from '@oclif/core';
import { withSpinner } from '../../presenters/spinner.js';
import { volumeCreatedText } from '../../presenters/volume-output.js';
import { nomadSpelling } from './nomad-flags.js';
import { VolumeWriteCommand, volumeWriteFlags } from './write-volume.js';

export default class VolumeCreate extends VolumeWriteCommand {
  static override summary = 'Create a dynamic host volume from an HCL or JSON spec, like nomad volume create.';
  static override description =
    "Runs the plugin named by plugin_id (the built-in mkdir, or a file in the plugin dir), saves the volume to client state and adds it to the node's HostVolumes. " +
    'With the id of an existing volume, updates it: create runs again with the new request (capacity expansion). ' +
    'Prints what nomad volume create prints; flags may be spelled the Nomad way (-detach) or with two dashes.';
  static override examples = [
    '<%= config.bin %> volume create volume.hcl',
    '<%= config.bin %> volume create -detach volume.hcl',
    'cat volume.json | <%= config.bin %> volume create - --json',
  ];
  static override args = {
    spec: Args.string({ description: 'Volume spec file (HCL or JSON), or - for stdin', required: true }),
  };
  static override flags = {
    ...volumeWriteFlags,
    detach: Flags.boolean({
      description:
        "Print the one line `Created host volume <name> with ID <id>` and do not monitor the volume (Nomad's -detach).",
      default: false,
    }),
    verbose: Flags.boolean({
      description: "Full IDs in the monitor, and the full detail block (Nomad's -verbose).",
      default: false,
    }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(
      VolumeCreate,
      nomadSpelling(this.argv, { json: true, ...VolumeCreate.flags }),
    );
    const volume = await this.writeVolume(
      args.spec,
      flags,
      'create',
      (agent, spec) =>
        withSpinner(`Creating host volume ${spec.name} with plugin ${spec.pluginId}`, agent.createVolume(spec)),
      (result) => dhvDocument('VolumeCreateResult', result),
    );
    if (volume === undefined) return;
    this.print(
      volumeCreatedText(volume, { detach: flags.detach, verbose: flags.verbose, tty: process.stdout.isTTY === true }),
    );
  }
}
