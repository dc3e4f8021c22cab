import { Args, Flags } from '@oclif/core';
import { AgentError } from '../../errors/agent-error.js';
import { DhvCommand, agentFlags } from '../dhv-command.js';
import { NO_VOLUMES, volumeDetail, volumeList } from '../../presenters/format-volume.js';
import { renderGoTemplateParts, templateData } from '../../go/text-template/index.js';
import { ALL_NAMESPACES } from '../../agent/volume-lookup.js';
import { asGoStruct, volumeStub } from '../../agent/volume-view.js';
import { findVolume } from './find-volume.js';
import { namespaceFlag } from './namespace.js';
import { nomadSpelling } from './nomad-flags.js';
import { checkVolumeType, typeFlag } from './volume-type.js';

const { 'node-pool': _agentNodePool, ...agentFlagsButPool } = agentFlags;

export default class VolumeStatus extends DhvCommand {
  static override summary = 'List the dynamic host volumes, or show one in detail, like nomad volume status.';
  static override description =
    'Without an ID: the list of the namespace (-namespace, $NOMAD_NAMESPACE; * for all), sorted by ID, IDs cut to 8 characters (-verbose: full), filtered by -node (ID prefix) and -node-pool. ' +
    'With an ID, a name, or a prefix of either: the detail block, then Capabilities and Allocations (-short: the block only); a prefix several volumes share prints their table. ' +
    '-json prints the volume (the list: its stubs, as Nomad does) as JSON, -t renders a Go template ({{.Field}}, {{range}}, {{if}}). Flags may be spelled the Nomad way (-short) or with two dashes.';
  static override examples = [
    '<%= config.bin %> volume status',
    '<%= config.bin %> volume status -type host -verbose',
    '<%= config.bin %> volume status 1e1d4540 -short',
    '<%= config.bin %> volume status -t \'{{range .}}{{.ID}} {{.Name}}{{"\\n"}}{{end}}\'',
    '<%= config.bin %> volume status 1e1d4540 --json',
  ];
  static override args = {
    id: Args.string({ description: 'Volume ID or name, or a unique prefix of either', required: false }),
  };
  static override flags = {
    ...agentFlagsButPool,
    type: typeFlag,
    namespace: namespaceFlag,
    short: Flags.boolean({ description: "Only the key = value block of one volume (Nomad's -short).", default: false }),
    verbose: Flags.boolean({ description: "Full IDs in the list (Nomad's -verbose).", default: false }),
    t: Flags.string({
      char: 't',
      description:
        "Render a Go template over the volume(s) (Nomad's -t): {{.Field}}, {{range .}}...{{end}}, {{if .Field}}...{{end}}.",
    }),
    node: Flags.string({ description: "List only the volumes of the node whose ID starts with this (Nomad's -node)." }),
    'node-pool': Flags.string({
      description:
        "List only the volumes in this node pool (Nomad's -node-pool). Here it filters; it does not set the agent's pool.",
    }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(
      VolumeStatus,
      nomadSpelling(this.argv, { json: true, ...VolumeStatus.flags }),
    );
    checkVolumeType(flags.type);
    if (args.id !== undefined && (flags.node !== undefined || flags['node-pool'] !== undefined)) {
      throw new AgentError('SPEC_INVALID', '-node or -node-pool options can only be used when no ID is provided', {});
    }
    const agent = await this.openAgent(flags, { readOnly: true });
    if (args.id === undefined) {
      const volumes = (await agent.volumes())
        .filter((v) => flags.namespace === ALL_NAMESPACES || v.Namespace === flags.namespace)
        .filter((v) => flags.node === undefined || v.NodeID.startsWith(flags.node))
        .filter((v) => flags['node-pool'] === undefined || v.NodePool === flags['node-pool'])
        .sort((a, b) => (a.ID < b.ID ? -1 : a.ID > b.ID ? 1 : 0));
      // Nomad prints nothing for an empty list with -json; a program reading dhv's --json gets [].
      if (this.jsonOutput) return this.printNomadJson(volumes.map(volumeStub));
      const template = flags.t;
      if (template === undefined) this.print(volumeList(volumes, { verbose: flags.verbose }));
      else if (volumes.length > 0)
        return this.printParts(renderGoTemplateParts(template, templateData(volumes.map(volumeStub))));
      if (volumes.length === 0) process.stderr.write(`${NO_VOLUMES}\n`);
      return;
    }
    const found = await findVolume(agent, args.id, flags.namespace, { command: 'status', verbose: flags.verbose });
    const volume = await agent.volume(found.ID);
    // Nomad's usage claims: present in the JSON only when allocations use the volume.
    const allocations = await agent.volumeUsers(volume);
    const withAllocations = allocations.length > 0 ? { ...volume, Allocations: allocations } : volume;
    if (this.jsonOutput) return this.printNomadJson(withAllocations);
    if (flags.t !== undefined)
      return this.printParts(renderGoTemplateParts(flags.t, templateData(asGoStruct(withAllocations))));
    return this.print(volumeDetail(volume, { short: flags.short, allocations }));
  }
}
