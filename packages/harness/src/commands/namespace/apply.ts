import { existsSync } from 'node:fs';
import { Args, Flags } from '@oclif/core';
import { UsageError } from '../../errors/dhv-error.js';
import { namespaceJson } from '../../presenters/format-namespace.js';
import { DhvCommand, agentFlags } from '../dhv-command.js';
import { nomadSpelling } from '../volume/nomad-flags.js';

export default class NamespaceApply extends DhvCommand {
  static override summary = 'Create or update a namespace, like nomad namespace apply NAME.';
  static override description =
    'Volumes and jobs live in a namespace that exists: default always does, any other is applied first. ' +
    "Applying an existing namespace keeps its description unless -description is given. Prints Nomad's line: " +
    'Successfully applied namespace "<name>"!';
  static override examples = [
    '<%= config.bin %> namespace apply analytics',
    '<%= config.bin %> namespace apply -description "Data team" analytics',
  ];
  static override args = {
    name: Args.string({ description: 'The namespace name (letters, digits and dashes, at most 128)', required: true }),
  };
  static override flags = {
    ...agentFlags,
    description: Flags.string({ description: "The namespace's description (Nomad's -description)." }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(
      NamespaceApply,
      nomadSpelling(this.argv, { json: true, ...NamespaceApply.flags }),
    );
    // Nomad's CLI reads an argument that names a file as a namespace specification; dhv takes names only.
    if (args.name === '-' || existsSync(args.name)) {
      throw new UsageError(
        `${args.name} is a file: dhv namespace apply takes a namespace name, not a specification file\nGive the name, and its description with -description.`,
        'USAGE',
        { name: args.name },
      );
    }
    const agent = await this.openAgent(flags);
    const namespace = await agent.namespaces().apply(args.name, flags.description);
    if (this.jsonOutput) return this.printNomadJson(namespaceJson(namespace));
    this.print(`Successfully applied namespace ${JSON.stringify(namespace.Name)}!`);
  }
}
