import { Args, Flags, ux } from '@oclif/core';
import { formatSize } from '@dhv/sdk/plugin';
import { buildPlugin, type BuildResult } from '../authoring/build-plugin.js';
import { defaultOutfile } from '../authoring/default-output.js';
import { dhvDocument } from '../presenters/dhv-document.js';
import { DhvCommand } from './dhv-command.js';

export default class Build extends DhvCommand {
  static override summary = 'Bundle a plugin into one executable file.';
  static override description = `Bundles the entry (whose default export is definePlugin({...})) and everything it imports into one minified CommonJS file. A Nomad agent runs plugins without PATH, so the file starts with a two-line /bin/sh launcher that runs the first node it finds: the one given with --node (default: the node running this build), then /usr/local/bin, /usr/bin, /opt/... and other usual places; with none, it prints one {"error": ...} line naming where it looked. The file is made executable, then run once as an agent would (fingerprint, empty environment); a file that does not answer is removed and the build fails.

--sourcemap keeps the file readable (not minified, a source map inside, node started with --enable-source-maps): a plugin's stack trace, on its stderr and in dhv check's report, names the source file and line.

--fixed-node writes a plain #!<node> line instead: about a millisecond faster to start, but the plugin runs only where node is at exactly that path.

With --sea the plugin is built into a Node single executable application instead: a copy of node with the plugin inside (about 100 MB), for clients without Node.`;

  static override examples = [
    '<%= config.bin %> build src/plugin.ts                 # writes dist/<the name in package.json>',
    '<%= config.bin %> build src/plugin.ts -o dist/my-plugin',
    '<%= config.bin %> build src/plugin.ts -o dist/my-plugin --node /usr/bin/node',
    '<%= config.bin %> build src/plugin.ts -o dist/my-plugin --node /usr/bin/node --fixed-node',
    '<%= config.bin %> build src/plugin.ts -o dist/my-plugin --sea',
    '<%= config.bin %> build src/plugin.ts --sourcemap           # stack traces name src/plugin.ts and its lines',
  ];

  static override args = {
    entry: Args.string({ description: 'the plugin source, e.g. src/plugin.ts', required: true }),
  };

  static override flags = {
    output: Flags.string({
      char: 'o',
      description:
        "the file to write; its name should be the plugin ID [default: dist/<plugin ID> in the entry's project, the ID being its package.json name]",
    }),
    node: Flags.string({
      description:
        'absolute path of the node the plugin tries first on the client [default: the node running this build]',
    }),
    'fixed-node': Flags.boolean({
      description: 'start with #!<node> rather than the launcher that searches the usual places',
      exclusive: ['sea'],
    }),
    sea: Flags.boolean({
      description: 'build a Node single executable application (node and the plugin in one binary)',
    }),
    sourcemap: Flags.boolean({
      description:
        "keep the plugin readable: not minified, with a source map inside, run with node's --enable-source-maps, so a stack trace names your source files and lines",
      exclusive: ['sea'],
    }),
  };

  async run(): Promise<object> {
    const { args, flags } = await this.parse(Build);
    const outfile = flags.output ?? (await defaultOutfile(args.entry));
    let result: BuildResult;
    // oclif's spinner, only for a person watching: pipes and --json get no progress lines.
    const showProgress = process.stderr.isTTY && !this.jsonEnabled();
    if (showProgress) ux.action.start(`Bundling ${args.entry}`);
    try {
      result = await buildPlugin({
        entry: args.entry,
        outfile,
        nodePath: flags.node,
        sea: flags.sea,
        fixedNode: flags['fixed-node'],
        sourcemap: flags.sourcemap,
      });
    } catch (err) {
      if (showProgress) ux.action.stop('failed');
      throw err;
    }
    if (showProgress) ux.action.stop();
    const what =
      result.kind === 'sea'
        ? `single executable with ${result.node}`
        : result.searchPath.length === 1
          ? `#!${result.node}`
          : `runs ${result.node}, else the first node in ${result.searchPath.length - 1} usual places`;
    this.log(`Built ${result.outfile} (${formatSize(result.bytes)}, ${what})`);
    if (result.version !== null) this.log(`fingerprint under the agent's environment: version ${result.version}`);
    for (const warning of result.warnings) this.warnLine(warning);
    // `kind` heads the document: the build's kind of executable is its `format`.
    const { kind: format, ...rest } = result;
    return dhvDocument('BuildResult', { ...rest, format });
  }
}
