import { Args, Flags } from '@oclif/core';
import { DhvCommand, agentFlags } from '../dhv-command.js';
import { AgentError } from '../../errors/agent-error.js';
import { UsageError } from '../../errors/dhv-error.js';
import { nodeDetail } from '../../presenters/format-node.js';
import { renderGoTemplateParts, templateData } from '../../go/text-template/index.js';
import { nomadSpelling } from '../volume/nomad-flags.js';

export default class NodeStatus extends DhvCommand {
  static override summary =
    'Show the simulated node: its name, class, datacenter, HostVolumes, attributes and meta, like nomad node status -self.';
  static override description =
    'The simulated agent is the only node, so with no node ID this shows it, as -self does (Nomad lists the nodes instead). ' +
    'HostVolumes holds the static volumes of the agent config (empty ID) and every ready dynamic volume; a volume whose last restore failed is left out. ' +
    "-short: the key = value block only; -verbose: full IDs, the Attributes (the host's and the plugins') and Meta. " +
    '--json prints the Nomad-shaped node object (ID, Name, Datacenter, NodeClass, NodePool, Attributes, Meta, Drivers, HostVolumes...); -t renders a Go template over it. ' +
    'Flags may be spelled the Nomad way (-self) or with two dashes.';
  static override examples = [
    '<%= config.bin %> node status -self',
    '<%= config.bin %> node status -verbose',
    "<%= config.bin %> node status --json | jq '.HostVolumes'",
    "<%= config.bin %> node status -t '{{.Name}} {{.Datacenter}} {{.NodeClass}}'",
  ];
  static override args = {
    node: Args.string({ description: 'The node ID or a prefix of it (this node is the only one)', required: false }),
  };
  static override flags = {
    ...agentFlags,
    self: Flags.boolean({
      description: "Show the local node (Nomad's -self); without a node ID it is shown anyway.",
      default: false,
    }),
    short: Flags.boolean({ description: "Only the key = value block (Nomad's -short).", default: false }),
    verbose: Flags.boolean({
      description: "Full IDs, Drivers, Attributes and Meta (Nomad's -verbose).",
      default: false,
    }),
    t: Flags.string({ char: 't', description: "Render a Go template over the node (Nomad's -t)." }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(NodeStatus, nomadSpelling(this.argv, { json: true, ...NodeStatus.flags }));
    if (args.node !== undefined && args.node.length === 1)
      throw new UsageError('Identifier must contain at least two characters.');
    const agent = await this.openAgent(flags, { readOnly: true });
    const ref = flags.self ? undefined : args.node;
    if (ref !== undefined && !agent.nodeId.startsWith(ref.toLowerCase()))
      throw new AgentError(
        'NODE_NOT_FOUND',
        `No node(s) with prefix "${ref}" found\nThe simulated node is ${agent.nodeId}; leave the ID out or use -self.`,
        { ref },
      );
    const status = await agent.status();
    if (this.jsonOutput) return this.printNomadJson(status.node);
    if (flags.t !== undefined) return this.printParts(renderGoTemplateParts(flags.t, templateData(status.node)));
    for (const w of status.warnings) this.warnLine(w);
    this.print(nodeDetail(status, { short: flags.short, verbose: flags.verbose }));
  }
}
