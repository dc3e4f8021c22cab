import { DhvCommand, agentFlags, openAgent } from '../dhv-command.js';
import { nodeDetail } from '../../presenters/format-node.js';

export default class NodeStatus extends DhvCommand {
  static override summary =
    'Show the simulated node: its plugin attributes and HostVolumes, like nomad node status -self.';
  static override description =
    'HostVolumes holds the static volumes of the agent config (empty ID) and every ready dynamic volume; a volume whose last restore failed is left out. ' +
    'With --json, prints the Nomad-shaped node object (ID, Name, NodePool, Attributes, HostVolumes...).';
  static override examples = [
    '<%= config.bin %> node status',
    "<%= config.bin %> node status --json | jq '.HostVolumes'",
  ];
  static override flags = { ...agentFlags };

  async run(): Promise<void> {
    const { flags } = await this.parse(NodeStatus);
    const agent = await openAgent(flags, (w) => this.warnLine(w));
    const status = await agent.status();
    if (this.jsonOutput) return this.printJson(status.node);
    for (const w of status.warnings) this.warnLine(w);
    this.print(nodeDetail(status));
  }
}
