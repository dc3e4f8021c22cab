import { dhvDocument } from '../../presenters/dhv-document.js';
import { Args, Flags } from '@oclif/core';
import { DhvCommand, agentFlags } from '../dhv-command.js';
import { EXIT_CODES } from '../../errors/exit-codes.js';
import { readJobFile } from '../../jobs/read-job-file.js';
import { runMonitor } from '../../presenters/format-job.js';
import { nomadSpelling } from '../volume/nomad-flags.js';

export default class JobRun extends DhvCommand {
  static override summary =
    'Run a job on the simulated node, like nomad job run: its tasks really run, with host volumes mounted.';
  static override description =
    "Reads an HCL2 job spec (or HCL's JSON syntax; -json: the API's JSON), validates it as Nomad's servers do (errors in Nomad's words), " +
    'places each allocation by the host volume rules (a failure prints Placement Failure lines), and starts each task as a real process: ' +
    "an exec task in its own mount namespace with each volume bind-mounted at its destination (read-only when asked), as nobody with the exec driver's capabilities. " +
    'Parts of a job dhv does not model (network, service, template, ...) are accepted with one warning naming them.';
  static override examples = [
    '<%= config.bin %> job run job.nomad.hcl',
    '<%= config.bin %> job run -detach job.nomad.hcl',
  ];
  static override args = { file: Args.string({ description: 'The job spec file (HCL2, or JSON)', required: true }) };
  static override flags = {
    ...agentFlags,
    detach: Flags.boolean({ description: "Print the evaluation ID and return (Nomad's -detach).", default: false }),
    'json-spec': Flags.boolean({ description: "The file is the API's JSON (Nomad's -json).", default: false }),
  };

  async run(): Promise<void> {
    const argv = this.argv.map((a) => (a === '-json' ? '--json-spec' : a));
    const { args, flags } = await this.parse(JobRun, nomadSpelling(argv, { json: true, ...JobRun.flags }));
    const { job, unmodelled } = await readJobFile(args.file, { json: flags['json-spec'] });
    if (unmodelled.length > 0)
      this.warnLine(`dhv does not model these parts of the job; accepted and ignored: ${unmodelled.join(', ')}`);
    const agent = await this.openAgent(flags);
    const report = await agent.jobs().run(job);
    if (this.jsonOutput)
      this.printJson(
        dhvDocument('JobRunResult', {
          EvalID: report.evalId,
          JobModifyIndex: report.job.Version,
          Allocations: report.placed,
          FailedTGAllocs: Object.fromEntries(
            report.failures.map((f) => [
              f.group,
              {
                ConstraintFiltered: { [f.constraint]: 1 },
                NodesEvaluated: 1,
                NodesFiltered: 1,
                CoalescedFailures: f.count - 1,
              },
            ]),
          ),
          ...(report.blockedEval ? { BlockedEval: report.blockedEval } : {}),
        }),
      );
    else if (flags.detach) return this.print(`Job registration successful\nEvaluation ID: ${report.evalId}`);
    else this.print(runMonitor(report));
    if (!flags.detach && report.failures.length > 0) this.exit(EXIT_CODES.placementFailed);
  }
}
