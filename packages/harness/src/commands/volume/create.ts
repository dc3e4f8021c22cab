import { Args, Flags } from '@oclif/core';
import { DhvCommand, agentFlags, openAgent } from '../dhv-command.js';
import { withSpinner } from '../../presenters/spinner.js';
import { volumeCreatedText } from '../../presenters/volume-output.js';
import { readVolumeSpec } from '../../volume-specs/volume-spec.js';
import { nomadSpelling } from './nomad-flags.js';

export default class VolumeCreate extends DhvCommand {
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
    ...agentFlags,
    detach: Flags.boolean({
      description:
        "Print the one line `Created host volume <name> with ID <id>` and do not monitor the volume (Nomad's -detach).",
      default: false,
    }),
    verbose: Flags.boolean({
      description: "Full IDs in the monitor, and the full detail block (Nomad's -verbose).",
      default: false,
    }),
    'policy-override': Flags.boolean({
      description: "Accepted for Nomad's -policy-override; the simulated agent has no Sentinel policies.",
      default: false,
    }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(
      VolumeCreate,
      nomadSpelling(this.argv, { json: true, ...VolumeCreate.flags }),
    );
    const spec = await readVolumeSpec(args.spec, 'create');
    const warnings: string[] = [...(spec.warnings ?? [])];
    const agent = await openAgent(flags, (w) => warnings.push(w));
    // The spec's warnings explain failures too (mode = 0755 reaches the plugin as "493").
    const { volume, created } = await withSpinner(
      `Creating host volume ${spec.name} with plugin ${spec.pluginId}`,
      agent.createVolume(spec),
    ).catch((err: unknown) => {
      if (!this.jsonOutput) for (const w of warnings) this.warnLine(w);
      throw err;
    });
    if (this.jsonOutput) return this.printJson({ Volume: volume, Created: created, Warnings: warnings });
    for (const w of warnings) this.warnLine(w);
    this.print(
      volumeCreatedText(volume, { detach: flags.detach, verbose: flags.verbose, tty: process.stdout.isTTY === true }),
    );
  }
}
