import { Args } from '@oclif/core';
import { DhvCommand, agentFlags, openAgent } from '../dhv-command.js';
import { volumeCreatedText } from '../../presenters/volume-output.js';
import { readVolumeSpec } from '../../volume-specs/volume-spec.js';

export default class VolumeRegister extends DhvCommand {
  static override summary = 'Register a volume that already exists at host_path, like nomad volume register.';
  static override description = 'Checks that host_path exists, saves the volume to client state with no plugin, and adds it to the node. No plugin runs, now or on restart.';
  static override examples = ['<%= config.bin %> volume register existing.hcl'];
  static override args = { spec: Args.string({ description: 'Volume spec file (HCL or JSON) with host_path, or - for stdin', required: true }) };
  static override flags = { ...agentFlags };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(VolumeRegister);
    const spec = await readVolumeSpec(args.spec, 'register');
    const warnings: string[] = [];
    const agent = await openAgent(flags, (w) => warnings.push(w));
    const { volume, created } = await agent.registerVolume(spec);
    if (this.jsonOutput) return this.printJson({ Volume: volume, Created: created, Warnings: warnings });
    for (const w of warnings) this.warnLine(w);
    this.print(volumeCreatedText(volume, created ? 'Registered' : 'Updated'));
  }
}
