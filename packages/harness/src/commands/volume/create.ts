import { Args } from '@oclif/core';
import { DhvCommand, agentFlags, openAgent } from '../dhv-command.js';
import { withSpinner } from '../../presenters/spinner.js';
import { volumeCreatedText } from '../../presenters/volume-output.js';
import { readVolumeSpec } from '../../volume-specs/volume-spec.js';

export default class VolumeCreate extends DhvCommand {
  static override summary = 'Create a dynamic host volume from an HCL or JSON spec, like nomad volume create.';
  static override description =
    'Runs the plugin named by plugin_id (the built-in mkdir, or a file in the plugin dir), saves the volume to client state and adds it to the node\'s HostVolumes. ' +
    'With the id of an existing volume, updates it: create runs again with the new request (capacity expansion).';
  static override examples = ['<%= config.bin %> volume create volume.hcl', 'cat volume.json | <%= config.bin %> volume create - --json'];
  static override args = { spec: Args.string({ description: 'Volume spec file (HCL or JSON), or - for stdin', required: true }) };
  static override flags = { ...agentFlags };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(VolumeCreate);
    const spec = await readVolumeSpec(args.spec, 'create');
    const warnings: string[] = [];
    const agent = await openAgent(flags, (w) => warnings.push(w));
    const { volume, created } = await withSpinner(`Creating host volume ${spec.name} with plugin ${spec.pluginId}`, agent.createVolume(spec));
    if (this.jsonOutput) return this.printJson({ Volume: volume, Created: created, Warnings: warnings });
    for (const w of warnings) this.warnLine(w);
    this.print(volumeCreatedText(volume, created ? 'Created' : 'Updated'));
  }
}
