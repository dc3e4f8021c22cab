import { Args, Flags, ux } from '@oclif/core';
import { initProject, type InitResult } from '../authoring/init-project.js';
import { TEMPLATE_NAMES } from '../authoring/templates.js';
import { dhvDocument } from '../presenters/dhv-document.js';
import { DhvCommand } from './dhv-command.js';

/** Said while @dhv/* are not on the registry: --from-registry makes a project whose npm install fails. */
const NOT_PUBLISHED =
  "--from-registry: @dhv/sdk and @dhv/harness are not on the npm registry yet, so this project's npm install fails with 404 (E404) until they are; without --from-registry, dhv init packs the ones it runs into vendor/";

export default class Init extends DhvCommand {
  static override summary = 'Scaffold a new plugin project.';
  static override description = `Writes a standalone TypeScript project: package.json (build, check and test scripts), tsconfig.json, src/plugin.ts written against definePlugin, a vitest test that runs the conformance checks against the built plugin, an example volume spec (volume.hcl) and a README that says how to build, check and install it.

The project depends on the exact @dhv/sdk and @dhv/harness that run this command: both are packed with npm pack into vendor/ and named as file: dependencies, so a plain npm install works on any machine, with no registry for @dhv/*. --from-registry depends on the published versions instead; --sdk-from and --harness-from on a package folder or tarball of your choice.`;

  static override examples = [
    '<%= config.bin %> init my-plugin',
    '<%= config.bin %> init ./plugins/scratch --name scratch-dir --template mkdir',
    '<%= config.bin %> init my-loop --template loopback --sdk-from ../dhv/packages/sdk --harness-from ../dhv/packages/harness',
    '<%= config.bin %> init my-plugin --from-registry',
  ];

  static override args = {
    dir: Args.string({ description: 'folder to create the project in (created when missing)', required: true }),
  };

  static override flags = {
    name: Flags.string({
      description: 'plugin ID, which is also its file name on the Nomad client [default: the folder name]',
    }),
    template: Flags.string({ description: 'project skeleton', options: TEMPLATE_NAMES, default: 'minimal' }),
    force: Flags.boolean({ description: 'write into a folder that is not empty, replacing files of the same names' }),
    'sdk-from': Flags.string({
      description:
        'depend on @dhv/sdk from this folder or npm pack tarball instead of a packed copy of the running one',
    }),
    'harness-from': Flags.string({
      description:
        'depend on @dhv/harness from this folder or npm pack tarball instead of a packed copy of the running one',
    }),
    'from-registry': Flags.boolean({
      description:
        'depend on the published @dhv/sdk and @dhv/harness (^ this version) instead of packed copies. They are not on the npm registry yet: npm install then fails with 404',
    }),
  };

  async run(): Promise<ReturnType<typeof dhvDocument<InitResult & { warnings: string[] }>>> {
    const { args, flags } = await this.parse(Init);
    if (flags['from-registry']) this.warnLine(NOT_PUBLISHED);
    let result: InitResult;
    // oclif's spinner, only for a person watching: pipes and --json get no progress lines.
    const showProgress = process.stderr.isTTY && !this.jsonEnabled();
    if (showProgress) ux.action.start('Writing the project and packing @dhv/sdk and @dhv/harness into it');
    try {
      result = await initProject({
        dir: args.dir,
        name: flags.name,
        template: flags.template,
        force: flags.force,
        sdkFrom: flags['sdk-from'],
        harnessFrom: flags['harness-from'],
        fromRegistry: flags['from-registry'],
      });
    } catch (err) {
      if (showProgress) ux.action.stop('failed');
      throw err;
    }
    if (showProgress) ux.action.stop();
    this.log(`Created plugin ${result.pluginId} (template ${result.template}) in ${result.dir}`);
    for (const file of result.files) this.log(`  ${file}`);
    this.log('\nNext:');
    for (const step of result.nextSteps) this.log(`  ${step}`);
    return dhvDocument('InitResult', { ...result, warnings: flags['from-registry'] ? [NOT_PUBLISHED] : [] });
  }
}
