import { Args, Flags } from '@oclif/core';
import { formatSize } from '@dhv/sdk/plugin';
import { buildPlugin, type BuildResult } from '../authoring/build-plugin.js';
import { DhvCommand } from './dhv-command.js';

export default class Build extends DhvCommand {
  static override summary = 'Bundle a plugin into one executable file.';
  static override description = `Bundles the entry (whose default export is definePlugin({...})) and everything it imports into one minified CommonJS file, starting with an interpreter line that names node by absolute path, since a Nomad agent runs plugins without PATH. The file is made executable, then run once as an agent would (fingerprint, empty environment); a file that does not answer is removed and the build fails.

With --sea the plugin is built into a Node single executable application instead: a copy of node with the plugin inside (about 100 MB), for clients without Node.`;

  static override examples = [
    '<%= config.bin %> build src/plugin.ts -o dist/my-plugin',
    '<%= config.bin %> build src/plugin.ts -o dist/my-plugin --node /usr/bin/node',
    '<%= config.bin %> build src/plugin.ts -o dist/my-plugin --sea',
  ];

  static override args = {
    entry: Args.string({ description: 'the plugin source, e.g. src/plugin.ts', required: true }),
  };

  static override flags = {
    output: Flags.string({ char: 'o', description: 'the file to write; its name should be the plugin ID', required: true }),
    node: Flags.string({ description: 'absolute path of the node the plugin runs with on the client [default: the node running this build]' }),
    sea: Flags.boolean({ description: 'build a Node single executable application (node and the plugin in one binary)' }),
  };

  async run(): Promise<BuildResult> {
    const { args, flags } = await this.parse(Build);
    const result = await buildPlugin({ entry: args.entry, outfile: flags.output, nodePath: flags.node, sea: flags.sea });
    const what = result.kind === 'sea' ? `single executable with ${result.node}` : `#!${result.node}`;
    this.log(`Built ${result.outfile} (${formatSize(result.bytes)}, ${what})`);
    if (result.version !== null) this.log(`fingerprint under the agent's environment: version ${result.version}`);
    for (const warning of result.warnings) this.warn(warning);
    return result;
  }
}

