import { Args, Flags } from '@oclif/core';
import { DhvCommand, agentFlags } from '../../dhv-command.js';
import { columns } from '../../../presenters/columns.js';
import { namespaceFlag } from '../namespace.js';
import { nomadSpelling } from '../nomad-flags.js';

export default class VolumeClaimList extends DhvCommand {
  static override summary = 'List the sticky volume claims of jobs, like nomad volume claim list.';
  static override description =
    'One claim per namespace, job, task group and volume ID, written when an allocation of a group with a sticky volume is placed; kept after job stop, gone with job stop -purge or volume claim delete.';
  static override examples = ['<%= config.bin %> volume claim list', '<%= config.bin %> volume claim list -job app'];
  static override args = { prefix: Args.string({ description: 'Claim ID prefix', required: false }) };
  static override flags = {
    ...agentFlags,
    namespace: namespaceFlag,
    job: Flags.string({ description: "Only this job's claims (Nomad's -job)." }),
    group: Flags.string({ description: "Only this task group's claims (Nomad's -group)." }),
    'volume-name': Flags.string({ description: "Only claims of volumes with this name (Nomad's -volume-name)." }),
    verbose: Flags.boolean({ description: "Full IDs (Nomad's -verbose).", default: false }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(
      VolumeClaimList,
      nomadSpelling(this.argv, { json: true, ...VolumeClaimList.flags }),
    );
    const claims = (await (await this.openAgent(flags)).jobs().stickyClaims(flags.namespace))
      .filter((c) => flags.job === undefined || c.JobID === flags.job)
      .filter((c) => flags.group === undefined || c.TaskGroupName === flags.group)
      .filter((c) => flags['volume-name'] === undefined || c.VolumeName === flags['volume-name'])
      .filter((c) => args.prefix === undefined || c.ID.startsWith(args.prefix));
    if (this.jsonOutput) return this.printNomadJson(claims);
    if (claims.length === 0) return this.print('No task group host volume claims found');
    const id = (s: string) => (flags.verbose ? s : s.slice(0, 8));
    this.print(
      columns(
        ['ID', 'Namespace', 'Job ID', 'Volume ID', 'Volume Name'],
        claims.map((c) => [id(c.ID), c.Namespace, c.JobID, id(c.VolumeID), c.VolumeName]),
      ),
    );
  }
}
