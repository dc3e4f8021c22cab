import { Args, loadHelpClass, toStandardizedId } from '@oclif/core';
import { DhvCommand } from './dhv-command.js';
import { unknownCommandError } from './unknown-command.js';

export default class Help extends DhvCommand {
  static override summary = 'Show the help of dhv, of a topic or of a command.';
  static override enableJsonFlag = false;
  static override strict = false;
  static override examples = [
    '<%= config.bin %> help',
    '<%= config.bin %> help volume',
    '<%= config.bin %> help volume create',
  ];
  static override args = {
    command: Args.string({ description: 'a topic or command, e.g. volume or volume create', required: false }),
  };

  async run(): Promise<void> {
    const { argv } = await this.parse(Help);
    const words = (argv as string[]).filter((word) => !word.startsWith('-'));
    if (words.length > 0) {
      const id = toStandardizedId(words.join(' '), this.config);
      if (!this.config.findCommand(id) && !this.config.findTopic(id)) throw unknownCommandError(this.config, id);
    }
    const HelpClass = await loadHelpClass(this.config);
    await new HelpClass(this.config, this.config.pjson.oclif.helpOptions).showHelp(words);
  }
}
