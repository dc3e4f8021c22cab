import { Args, Flags } from '@oclif/core';
import { initProject, type InitResult } from '../authoring/init-project.js';
import { TEMPLATE_NAMES } from '../authoring/templates.js';
import { DhvCommand } from './dhv-command.js';

export default class Init extends DhvCommand {
  static override summary = 'Scaffold a new plugin project.';
  static override description = `Writes a standalone TypeScript project: package.json (build, check and test scripts), tsconfig.json, src/plugin.ts written against definePlugin, a vitest test that runs the conformance checks against the built plugin, an example volume spec (volume.hcl) and a README that says how to build, check and install it.

Until @dhv/sdk and @dhv/harness are published, point the dependencies at this repo with --sdk-from and --harness-from (a package folder, or a tarball made by npm pack).`;

  static override examples = [
    '<%= config.bin %> init my-plugin',
    '<%= config.bin %> init ./plugins/scratch --name scratch-dir --template mkdir',
    '<%= config.bin %> init my-loop --template loopback --sdk-from ../dhv/packages/sdk --harness-from ../dhv/packages/harness',
  ];

  static override args = {
    dir: Args.string({ description: 'folder to create the project in (created when missing)', required: true }),
  };

  static override flags = {
    name: Flags.string({ description: 'plugin ID, which is also its file name on the Nomad client [default: the folder name]' }),
    template: Flags.string({ description: 'project skeleton', options: TEMPLATE_NAMES, default: 'minimal' }),
    force: Flags.boolean({ description: 'write into a folder that is not empty, replacing files of the same names' }),
    'sdk-from': Flags.string({ description: 'depend on @dhv/sdk from this folder or npm pack tarball instead of the registry' }),
    'harness-from': Flags.string({ description: 'depend on @dhv/harness from this folder or npm pack tarball instead of the registry' }),
  };

  async run(): Promise<InitResult> {
    const { args, flags } = await this.parse(Init);
    const result = await initProject({
      dir: args.dir,
      name: flags.name,
      template: flags.template,
      force: flags.force,
      sdkFrom: flags['sdk-from'],
      harnessFrom: flags['harness-from'],
    });
    this.log(`Created plugin ${result.pluginId} (template ${result.template}) in ${result.dir}`);
    for (const file of result.files) this.log(`  ${file}`);
    this.log('\nNext:');
    for (const step of result.nextSteps) this.log(`  ${step}`);
    return result;
  }
}
