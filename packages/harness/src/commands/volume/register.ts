import { Args, Flags } from '@oclif/core';
import { DhvCommand, agentFlags, openAgent } from '../dhv-command.js';
import { volumeRegisteredText } from '../../presenters/volume-output.js';
import { readVolumeSpec } from '../../volume-specs/volume-spec.js';
import { nomadSpelling } from './nomad-flags.js';

export default class VolumeRegister extends DhvCommand {
  static override summary = 'Register a volume that already exists at host_path, like nomad volume register.';
  static override description =
    'Checks that host_path exists, saves the volume to client state with no plugin, and adds it to the node. No plugin runs, now or on restart. ' +
    "Prints Nomad's one line: Registered host volume <name> with ID <id>.";
  static override examples = ['<%= config.bin %> volume register existing.hcl'];
  static override args = {
    spec: Args.string({ description: 'Volume spec file (HCL or JSON) with host_path, or - for stdin', required: true }),
  };
  static override flags = {
    ...agentFlags,
    detach: Flags.boolean({ description: "Accepted for Nomad's -detach: register never monitors.", default: false }),
    verbose: Flags.boolean({ description: "Accepted for Nomad's -verbose.", default: false }),
    'policy-override': Flags.boolean({
      description: "Accepted for Nomad's -policy-override; the simulated agent has no Sentinel policies.",
      default: false,
    }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(
      VolumeRegister,
      nomadSpelling(this.argv, { json: true, ...VolumeRegister.flags }),
    );
    const spec = await readVolumeSpec(args.spec, 'register');
    const warnings: string[] = [...(spec.warnings ?? [])];
    const agent = await openAgent(flags, (w) => warnings.push(w));
    const { volume, created } = await agent.registerVolume(spec).catch((err: unknown) => {
      if (!this.jsonOutput) for (const w of warnings) this.warnLine(w);
      throw err;
    });
    if (this.jsonOutput) return this.printJson({ Volume: volume, Created: created, Warnings: warnings });
    for (const w of warnings) this.warnLine(w);
    this.print(volumeRegisteredText(volume));
  }
}
