import { Flags } from '@oclif/core';
import { EXIT_CODES } from '../errors/exit-codes.js';
import { DhvCommand, interruptions } from './dhv-command.js';
import { journalProcessGroups } from '../runner/process-runner.js';
import { runSeedStory } from '../demo/seed-story.js';
import { dhvDocument } from '../presenters/dhv-document.js';

export default class Demo extends DhvCommand {
  static override summary =
    'Run the whole host volume story end to end in a temporary agent, and leave nothing behind.';
  static override description =
    'Installs the reference plugins (packages/plugin-mkdir/dist/dhv-mkdir, packages/plugin-loopback/dist/dhv-loopback) into a temporary agent with a static host volume, ' +
    'creates a dhv-mkdir volume and (as root) a 47 MiB dhv-loopback volume, shows them in HostVolumes, writes a file into each, restarts with --reboot, ' +
    'shows them restored with the files intact, deletes them, and checks that no mount, loop device or file is left.';
  static override examples = ['<%= config.bin %> demo', 'sudo <%= config.bin %> demo --json'];
  static override flags = {
    loopback: Flags.boolean({
      description: 'Include the dhv-loopback volume (default: when running as root).',
      allowNo: true,
    }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(Demo);
    journalProcessGroups();
    const stop = new AbortController();
    const hurry = new AbortController();
    const signals = interruptions(stop, hurry, (line) => this.warnLine(line));
    const report = await runSeedStory({
      ...(flags.loopback !== undefined ? { loopback: flags.loopback } : {}),
      ...(this.jsonOutput ? {} : { onLine: (line: string) => this.print(line) }),
      signal: stop.signal,
      hurry: hurry.signal,
    });
    if (this.jsonOutput) this.printJson(dhvDocument('DemoReport', report));
    const interrupted = signals.exitCode();
    if (interrupted !== undefined) this.exit(interrupted);
    if (!report.ok) this.exit(EXIT_CODES.failed);
  }
}
