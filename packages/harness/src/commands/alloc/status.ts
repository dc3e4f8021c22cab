import { Args } from '@oclif/core';
import { DhvCommand, agentFlags } from '../dhv-command.js';
import { allocStatus } from '../../presenters/format-job.js';
import { nomadSpelling } from '../volume/nomad-flags.js';

export default class AllocStatus extends DhvCommand {
  static override summary = 'Show an allocation and its task events, like nomad alloc status.';
  static override description =
    'By ID or a unique prefix of it. -json prints the allocation in the API shape (TaskStates with their Events).';
  static override examples = [
    '<%= config.bin %> alloc status 5d2c1a0e',
    '<%= config.bin %> alloc status --json 5d2c1a0e',
  ];
  static override args = { alloc: Args.string({ description: 'Allocation ID or prefix', required: true }) };
  static override flags = { ...agentFlags };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(
      AllocStatus,
      nomadSpelling(this.argv, { json: true, ...AllocStatus.flags }),
    );
    const alloc = await (await this.openAgent(flags)).jobs().findAlloc(args.alloc);
    if (this.jsonOutput) return this.printNomadJson(alloc);
    this.print(allocStatus(alloc));
  }
}
