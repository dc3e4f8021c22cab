import { Args } from '@oclif/core';
import { DhvCommand, agentFlags, openAgent } from '../dhv-command.js';
import { volumeDetail, volumeList } from '../../presenters/format-volume.js';

export default class VolumeStatus extends DhvCommand {
  static override summary = 'List the dynamic host volumes, or show one in detail, like nomad volume status.';
  static override examples = ['<%= config.bin %> volume status', '<%= config.bin %> volume status 1e1d4540 --json'];
  static override args = { id: Args.string({ description: 'Volume ID or a unique prefix of it', required: false }) };
  static override flags = { ...agentFlags };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(VolumeStatus);
    const agent = await openAgent(flags, (w) => this.warnLine(w));
    if (args.id === undefined) {
      const volumes = await agent.volumes();
      return this.jsonOutput ? this.printJson(volumes) : this.print(volumeList(volumes));
    }
    const volume = await agent.volume(args.id);
    return this.jsonOutput ? this.printJson(volume) : this.print(volumeDetail(volume));
  }
}
