import { dhvDocument } from '../presenters/dhv-document.js';
import { DhvCommand } from './dhv-command.js';

export interface VersionInfo {
  name: string;
  version: string;
  /** `<platform>-<arch>`, as in `dhv --version`. */
  architecture: string;
  nodeVersion: string;
}

export default class Version extends DhvCommand {
  static override summary = 'Show the version of dhv (as dhv --version and dhv -v do).';
  static override examples = ['<%= config.bin %> version', '<%= config.bin %> version --json'];

  async run(): Promise<object> {
    await this.parse(Version);
    this.log(this.config.userAgent);
    return dhvDocument('Version', {
      name: this.config.name,
      version: this.config.version,
      architecture: `${this.config.platform}-${this.config.arch}`,
      nodeVersion: process.version,
    } satisfies VersionInfo);
  }
}
