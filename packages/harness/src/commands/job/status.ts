import { Args, Flags } from '@oclif/core';
import { AgentError } from '../../errors/agent-error.js';
import { DhvCommand, agentFlags } from '../dhv-command.js';
import { columns } from '../../presenters/columns.js';
import { formatTime, jobStatus } from '../../presenters/format-job.js';
import { namespaceFlag } from '../volume/namespace.js';
import { nomadSpelling } from '../volume/nomad-flags.js';

export default class JobStatus extends DhvCommand {
  static override summary = 'Show a job and its allocations, or list the jobs, like nomad job status.';
  static override description =
    'With a job ID: its block, Placement Failure lines when an allocation could not be placed, and its allocations. Without: the list. -json prints the job and its allocations in the API shape.';
  static override examples = ['<%= config.bin %> job status', '<%= config.bin %> job status writer'];
  static override args = { job: Args.string({ description: 'The job ID', required: false }) };
  static override flags = {
    ...agentFlags,
    namespace: namespaceFlag,
    short: Flags.boolean({
      description: "With a job ID, only the job's block: no placement failures, no allocations (Nomad's -short).",
      default: false,
    }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(JobStatus, nomadSpelling(this.argv, { json: true, ...JobStatus.flags }));
    const jobs = (await this.openAgent(flags)).jobs();
    if (args.job === undefined) {
      const all = await jobs.jobs();
      if (this.jsonOutput) return this.printNomadJson(all.map((r) => r.Job));
      if (all.length === 0) return this.print('No running jobs');
      const allocs = await jobs.allocs();
      return this.print(
        columns(
          ['ID', 'Type', 'Priority', 'Status', 'Submit Date'],
          all.map((r) => {
            const live = allocs.some(
              (a) =>
                a.JobID === r.Job.ID &&
                a.Namespace === r.Job.Namespace &&
                (a.ClientStatus === 'running' || a.ClientStatus === 'pending'),
            );
            return [
              r.Job.ID,
              r.Job.Type,
              '50',
              live ? 'running' : r.Job.Stop ? 'dead' : 'pending',
              formatTime(r.Job.SubmitTime),
            ];
          }),
        ),
      );
    }
    const record = await jobs.job(flags.namespace, args.job);
    if (!record)
      throw new AgentError('SPEC_INVALID', `No job(s) with prefix or id "${args.job}" found`, { job: args.job });
    const allocs = (await jobs.allocs())
      .filter((a) => a.JobID === record.Job.ID && a.Namespace === record.Job.Namespace)
      .sort((a, b) => b.CreateTime - a.CreateTime);
    if (this.jsonOutput)
      return this.printNomadJson({ Job: record.Job, Allocations: allocs, FailedTGAllocs: record.FailedTGAllocs });
    this.print(jobStatus(record, allocs, { short: flags.short }));
  }
}
