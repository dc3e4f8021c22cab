import { dhvDocument } from '../../presenters/dhv-document.js';
import { Args } from '@oclif/core';
import { DhvCommand, agentFlags } from '../dhv-command.js';
import { nomadSpelling } from '../volume/nomad-flags.js';

export default class NamespaceDelete extends DhvCommand {
  static override summary = 'Delete a namespace, like nomad namespace delete NAME.';
  static override description =
    "Refused, in Nomad's words, for default and while a job or allocation of the namespace is not terminal. " +
    "Host volumes in it are kept (Nomad's delete looks at CSI volumes only): they are still listed with -namespace and can be deleted, " +
    'but no volume or job can be created in the namespace until it is applied again. Prints Successfully deleted namespace "<name>"!';
  static override examples = ['<%= config.bin %> namespace delete analytics'];
  static override args = { name: Args.string({ description: 'The namespace name', required: true }) };
  static override flags = { ...agentFlags };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(
      NamespaceDelete,
      nomadSpelling(this.argv, { json: true, ...NamespaceDelete.flags }),
    );
    const agent = await this.openAgent(flags);
    await agent.namespaces().delete(args.name);
    if (this.jsonOutput) return this.printJson(dhvDocument('NamespaceDeleteResult', { Deleted: args.name }));
    this.print(`Successfully deleted namespace ${JSON.stringify(args.name)}!`);
  }
}
