import { dhvDocument } from '../../presenters/dhv-document.js';
import { stopMonitor } from '../../presenters/format-job.js';
import { Args, Flags } from '@oclif/core';
import { DhvCommand, agentFlags } from '../dhv-command.js';
import { namespaceFlag } from '../volume/namespace.js';
import { nomadSpelling } from '../volume/nomad-flags.js';

export default class JobStop extends DhvCommand {
  static override summary = "Stop a job's allocations, like nomad job stop; -purge forgets the job.";
  static override description =
    'Sends each task its kill signal (SIGINT unless kill_signal says otherwise), then SIGKILL after kill_timeout (5 s), and waits until every allocation is terminal: from then on its volumes are no longer in use.';
  static override examples = ['<%= config.bin %> job stop writer', '<%= config.bin %> job stop -purge writer'];
  static override args = { job: Args.string({ description: 'The job ID', required: true }) };
  static override flags = {
    ...agentFlags,
    namespace: namespaceFlag,
    purge: Flags.boolean({ description: "Forget the job and its allocations (Nomad's -purge).", default: false }),
    detach: Flags.boolean({
      description: "Print the evaluation ID only (Nomad's -detach); dhv still waits for the tasks to stop.",
      default: false,
    }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(JobStop, nomadSpelling(this.argv, { json: true, ...JobStop.flags }));
    const jobs = (await this.openAgent(flags)).jobs();
    const { evalId, stopped } = await jobs.stop(flags.namespace, args.job, { purge: flags.purge });
    if (this.jsonOutput) return this.printJson(dhvDocument('JobStopResult', { EvalID: evalId, Allocations: stopped }));
    if (flags.detach) return this.print(evalId);
    this.print(stopMonitor(evalId, args.job));
  }
}
