import { listReferencePlugins } from '../../demo/reference-plugins.js';
import { columns } from '../../presenters/columns.js';
import { dhvDocument } from '../../presenters/dhv-document.js';
import { DhvCommand } from '../dhv-command.js';

export default class PluginList extends DhvCommand {
  static override summary =
    'List the reference plugins this dhv brings (dhv-mkdir, dhv-loopback) and where each executable is.';
  static override description =
    'The reference plugins travel inside the dhv install (in a global npm install, under its node_modules). ' +
    'dhv plugin install <plugin> [dir] copies one into a plugin dir; the path printed here is what dhv check and cp take.';
  static override examples = [
    '<%= config.bin %> plugin list',
    '<%= config.bin %> check "$(<%= config.bin %> plugin list --json | jq -r \'.plugins[0].path\')"',
  ];

  async run(): Promise<void> {
    await this.parse(PluginList);
    const plugins = await listReferencePlugins();
    if (this.jsonOutput) return this.printJson(dhvDocument('ReferencePluginList', { plugins }));
    this.print(
      columns(
        ['ID', 'Version', 'Path'],
        plugins.map((p) => [p.id, p.version, p.path ?? `(not here: ${p.fix})`]),
      ),
    );
  }
}
