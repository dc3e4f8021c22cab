import { dhvDocument } from '../../presenters/dhv-document.js';
import { Args, Flags } from '@oclif/core';
import { UsageError } from '../../errors/dhv-error.js';
import { volumeRegisteredText } from '../../presenters/volume-output.js';
import { nomadSpelling } from './nomad-flags.js';
import { VolumeWriteCommand, volumeWriteFlags } from './write-volume.js';

export default class VolumeRegister extends VolumeWriteCommand {
  static override summary = 'Register a volume that already exists at host_path, like nomad volume register.';
  static override description =
    'Checks that host_path exists, saves the volume to client state with no plugin, and adds it to the node. No plugin runs, now or on restart. ' +
    "Prints Nomad's one line: Registered host volume <name> with ID <id>.";
  static override examples = ['<%= config.bin %> volume register existing.hcl'];
  static override args = {
    spec: Args.string({ description: 'Volume spec file (HCL or JSON) with host_path, or - for stdin', required: true }),
  };
  static override flags = {
    ...volumeWriteFlags,
    detach: Flags.boolean({
      description: 'Refused, as Nomad refuses it: register has no monitor to detach from.',
      hidden: true,
      default: false,
    }),
    verbose: Flags.boolean({
      description: 'Refused, as Nomad refuses it: register prints one line.',
      hidden: true,
      default: false,
    }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(
      VolumeRegister,
      nomadSpelling(this.argv, { json: true, ...VolumeRegister.flags }),
    );
    for (const name of ['detach', 'verbose'] as const)
      if (flags[name])
        throw new UsageError(
          `flag provided but not defined: -${name}\nnomad volume register has no -${name}: it never monitors the volume and prints one line; leave -${name} out.`,
        );
    const volume = await this.writeVolume(
      args.spec,
      flags,
      'register',
      (agent, spec) => agent.registerVolume(spec),
      (result) => dhvDocument('VolumeRegisterResult', result),
    );
    if (volume === undefined) return;
    this.print(volumeRegisteredText(volume));
  }
}
