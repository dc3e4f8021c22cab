import { Args, Flags } from '@oclif/core';
import { UsageError } from '../../errors/dhv-error.js';
import { DhvCommand, agentFlags, openAgent } from '../dhv-command.js';
import { colorOn, volumeWarningsText } from '../../presenters/format-volume.js';
import { volumeRegisteredText } from '../../presenters/volume-output.js';
import { readVolumeSpec } from '../../volume-specs/volume-spec.js';
import { findVolume } from './find-volume.js';
import { namespaceFlag, namespaceForSpec } from './namespace.js';
import { nomadSpelling } from './nomad-flags.js';
import { POLICY_OVERRIDE_NOTE, policyOverrideFlag } from './policy-override.js';

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
    'policy-override': policyOverrideFlag,
    id: Flags.string({
      description:
        "Update the volume with this ID, name, or a unique prefix of either (Nomad's -id), as `id =` in the spec would.",
    }),
    namespace: namespaceFlag,
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
    const read = await readVolumeSpec(args.spec, 'register');
    const warnings: string[] = [...(read.warnings ?? [])];
    const agent = await openAgent(
      flags,
      (w) => warnings.push(w),
      (w) => this.warnLine(w),
    );
    const namespace = namespaceForSpec(read.namespace, flags.namespace);
    const id =
      flags.id === undefined ? read.id : (await findVolume(agent, flags.id, namespace, { command: 'register' })).ID;
    const spec = { ...read, namespace, id };
    const notes = flags['policy-override'] ? [POLICY_OVERRIDE_NOTE] : [];
    const { volume, created } = await agent.registerVolume(spec).catch((err: unknown) => {
      if (!this.jsonOutput) for (const w of warnings) this.warnLine(w);
      throw err;
    });
    if (this.jsonOutput)
      return this.printJson({
        Volume: volume,
        Created: created,
        Warnings: warnings,
        ...(notes.length ? { Notes: notes } : {}),
      });
    for (const n of notes) this.warnLine(n);
    process.stdout.write(volumeWarningsText(warnings, { color: colorOn(process.stdout) }));
    this.print(volumeRegisteredText(volume));
  }
}
