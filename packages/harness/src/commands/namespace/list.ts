import { namespaceJson, namespaceTable } from '../../presenters/format-namespace.js';
import { DhvCommand, agentFlags } from '../dhv-command.js';
import { nomadSpelling } from '../volume/nomad-flags.js';

export default class NamespaceList extends DhvCommand {
  static override summary = 'List the namespaces, like nomad namespace list.';
  static override description =
    "Nomad's table (Name, Description, sorted by name; default always there). -json/--json: Nomad's namespace objects.";
  static override examples = ['<%= config.bin %> namespace list', '<%= config.bin %> namespace list -json'];
  static override flags = { ...agentFlags };

  async run(): Promise<void> {
    const { flags } = await this.parse(NamespaceList, nomadSpelling(this.argv, { json: true, ...NamespaceList.flags }));
    const agent = await this.openAgent(flags, { readOnly: true });
    const namespaces = await agent.namespaces().list();
    if (this.jsonOutput) return this.printNomadJson(namespaces.map(namespaceJson));
    this.print(namespaceTable(namespaces));
  }
}
