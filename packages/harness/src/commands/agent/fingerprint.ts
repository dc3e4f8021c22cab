import { DhvCommand, agentFlags, openAgent } from '../dhv-command.js';
import { fingerprintJson } from '../../presenters/agent-json.js';
import { fingerprintText } from '../../presenters/format-node.js';

export default class AgentFingerprint extends DhvCommand {
  static override summary = 'Discover the plugins in the plugin dir and print the node attributes they give.';
  static override description =
    'Fingerprints every executable in the plugin dir concurrently, 1 s each, as the agent does; a failing plugin is skipped with the reason. ' +
    "The built-in mkdir is always present. The result becomes the node's attributes.";
  static override examples = ['<%= config.bin %> agent fingerprint --plugin-dir /opt/nomad/host_volume_plugins'];
  static override flags = { ...agentFlags };

  async run(): Promise<void> {
    const { flags } = await this.parse(AgentFingerprint);
    const agent = await openAgent(flags, (w) => this.warnLine(w));
    const fingerprint = await agent.fingerprint();
    if (this.jsonOutput) return this.printJson(fingerprintJson(fingerprint));
    this.print(fingerprintText(fingerprint));
  }
}
