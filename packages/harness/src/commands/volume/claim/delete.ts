import { dhvDocument } from '../../../presenters/dhv-document.js';
import { Args, Flags } from '@oclif/core';
import { AgentError } from '../../../errors/agent-error.js';
import { DhvCommand, agentFlags } from '../../dhv-command.js';
import { namespaceFlag } from '../namespace.js';
import { nomadSpelling } from '../nomad-flags.js';

export default class VolumeClaimDelete extends DhvCommand {
  static override summary = 'Delete a sticky volume claim, like nomad volume claim delete.';
  static override description =
    'By its full ID, or an 8-character prefix of it looked up in the namespace. Needs -y (dhv never prompts). A claim of another namespace does not exist from this one.';
  static override examples = ['<%= config.bin %> volume claim delete -y 0a76e6b1'];
  static override args = { id: Args.string({ description: 'Claim ID or prefix', required: true }) };
  static override flags = {
    ...agentFlags,
    namespace: namespaceFlag,
    y: Flags.boolean({ char: 'y', description: 'Delete without asking (Nomad asks on a terminal).', default: false }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(
      VolumeClaimDelete,
      nomadSpelling(this.argv, { json: true, ...VolumeClaimDelete.flags }),
    );
    if (!flags.y)
      throw new AgentError('SPEC_INVALID', 'This command requires -y option when running in non-interactive mode', {});
    const jobs = (await this.openAgent(flags)).jobs();
    let id = args.id;
    if (id.length === 8) {
      const matches = (await jobs.stickyClaims(flags.namespace)).filter((c) => c.ID.startsWith(id));
      if (matches.length === 0)
        throw new AgentError('SPEC_INVALID', `No claim(s) with prefix "${id}" found`, { prefix: id });
      if (matches.length > 1)
        throw new AgentError('SPEC_INVALID', 'Prefix matched multiple claims', { matches: matches.map((c) => c.ID) });
      id = matches[0]!.ID;
    }
    await jobs.deleteStickyClaim(flags.namespace, id);
    if (this.jsonOutput) return this.printJson(dhvDocument('VolumeClaimDeleteResult', { Deleted: id }));
    this.print(`Task group host volume claim ${id} successfully deleted`);
  }
}
