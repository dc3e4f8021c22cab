import { Args, Flags } from '@oclif/core';
import { DhvCommand, agentFlags, openAgent } from '../dhv-command.js';
import { colorOn, volumeWarningsText } from '../../presenters/format-volume.js';
import { withSpinner } from '../../presenters/spinner.js';
import { volumeCreatedText } from '../../presenters/volume-output.js';
import { readVolumeSpec } from '../../volume-specs/volume-spec.js';
import { findVolume } from './find-volume.js';
import { namespaceFlag, namespaceForSpec } from './namespace.js';
import { nomadSpelling } from './nomad-flags.js';
import { POLICY_OVERRIDE_NOTE, policyOverrideFlag } from './policy-override.js';

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
    'policy-override': policyOverrideFlag,
    id: Flags.string({
      description:
        "Update the volume with this ID, name, or a unique prefix of either (Nomad's -id), as `id =` in the spec would.",
    }),
    namespace: namespaceFlag,
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(
      VolumeCreate,
      nomadSpelling(this.argv, { json: true, ...VolumeCreate.flags }),
    );
    const read = await readVolumeSpec(args.spec, 'create');
    const warnings: string[] = [...(read.warnings ?? [])];
    const agent = await openAgent(
      flags,
      (w) => warnings.push(w),
      (w) => this.warnLine(w),
    );
    const namespace = namespaceForSpec(read.namespace, flags.namespace);
    const id =
      flags.id === undefined ? read.id : (await findVolume(agent, flags.id, namespace, { command: 'create' })).ID;
    const spec = { ...read, namespace, id };
    const notes = flags['policy-override'] ? [POLICY_OVERRIDE_NOTE] : [];
    // The spec's warnings explain failures too (mode = 0755 reaches the plugin as "493").
    const { volume, created } = await withSpinner(
      `Creating host volume ${spec.name} with plugin ${spec.pluginId}`,
      agent.createVolume(spec),
    ).catch((err: unknown) => {
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
    this.print(
      volumeCreatedText(volume, { detach: flags.detach, verbose: flags.verbose, tty: process.stdout.isTTY === true }),
    );
  }
}
