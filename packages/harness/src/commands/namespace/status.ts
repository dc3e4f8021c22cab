import { Args } from '@oclif/core';
import { AgentError } from '../../errors/agent-error.js';
import { namespaceJson, namespaceStatus, namespaceTable } from '../../presenters/format-namespace.js';
import { DhvCommand, agentFlags } from '../dhv-command.js';
import { nomadSpelling } from '../volume/nomad-flags.js';

export default class NamespaceStatus extends DhvCommand {
  static override summary = 'Show one namespace, like nomad namespace status NAME.';
  static override description =
    "The namespace named, or the only one whose name starts with the argument (Nomad's prefix lookup); several matches are refused with their table.";
  static override examples = [
    '<%= config.bin %> namespace status default',
    '<%= config.bin %> namespace status -json ana',
  ];
  static override args = {
    name: Args.string({ description: 'The namespace name, or a prefix of it', required: true }),
  };
  static override flags = { ...agentFlags };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(
      NamespaceStatus,
      nomadSpelling(this.argv, { json: true, ...NamespaceStatus.flags }),
    );
    const agent = await this.openAgent(flags, { readOnly: true });
    const matches = await agent.namespaces().withPrefix(args.name);
    const namespace = matches.length === 1 ? matches[0] : matches.find((n) => n.Name === args.name);
    if (matches.length === 0) {
      throw new AgentError(
        'NAMESPACE_NOT_FOUND',
        `Error retrieving namespaces: Namespace ${JSON.stringify(args.name)} matched no namespaces\nRun dhv namespace list to see the namespaces there are.`,
        { namespace: args.name },
      );
    }
    if (!namespace) {
      throw new AgentError(
        'NAMESPACE_NOT_FOUND',
        `Prefix matched multiple namespaces\n\n${namespaceTable(matches)}\n\nGive more of the name.`,
        { namespace: args.name, matches: matches.map((n) => n.Name) },
      );
    }
    if (this.jsonOutput) return this.printNomadJson(namespaceJson(namespace));
    this.print(namespaceStatus(namespace));
  }
}
