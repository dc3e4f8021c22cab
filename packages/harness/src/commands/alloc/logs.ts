import { Args, Flags } from '@oclif/core';
import { AgentError } from '../../errors/agent-error.js';
import { DhvCommand, agentFlags } from '../dhv-command.js';
import { namespaceFlag } from '../volume/namespace.js';
import { nomadSpelling } from '../volume/nomad-flags.js';

export default class AllocLogs extends DhvCommand {
  static override summary = "Print a task's stdout (or -stderr), like nomad alloc logs.";
  static override description =
    'By allocation ID or prefix, or with -job the newest allocation of a job. The task may be left out when the group has one.';
  static override examples = [
    '<%= config.bin %> alloc logs 5d2c1a0e',
    '<%= config.bin %> alloc logs -job writer',
    '<%= config.bin %> alloc logs -stderr 5d2c1a0e t',
  ];
  static override args = {
    alloc: Args.string({ description: 'Allocation ID or prefix (with -job: the task)', required: false }),
    task: Args.string({ description: 'The task', required: false }),
  };
  static override flags = {
    ...agentFlags,
    namespace: namespaceFlag,
    job: Flags.string({ description: "Use the newest allocation of this job (Nomad's -job)." }),
    stderr: Flags.boolean({ description: "Print stderr (Nomad's -stderr).", default: false }),
  };
  static override enableJsonFlag = false;

  async run(): Promise<void> {
    const { args, flags } = await this.parse(AllocLogs, nomadSpelling(this.argv, { ...AllocLogs.flags }));
    const jobs = (await this.openAgent(flags)).jobs();
    let taskArg = args.task;
    let alloc;
    if (flags.job !== undefined) {
      const allocs = (await jobs.allocs())
        .filter((a) => a.JobID === flags.job && a.Namespace === flags.namespace)
        .sort((a, b) => b.CreateTime - a.CreateTime);
      if (allocs.length === 0)
        throw new AgentError('SPEC_INVALID', `No allocations found for job "${flags.job}"`, { job: flags.job });
      alloc = allocs[0]!;
      taskArg = args.alloc;
    } else {
      if (args.alloc === undefined)
        throw new AgentError(
          'SPEC_INVALID',
          'This command takes one of the following argument conditions:\n * The allocation ID\n * -job <job ID>',
          {},
        );
      alloc = await jobs.findAlloc(args.alloc);
    }
    const tasks = Object.keys(alloc.TaskStates);
    const task = taskArg ?? (tasks.length === 1 ? tasks[0]! : undefined);
    if (task === undefined || !tasks.includes(task))
      throw new AgentError(
        'SPEC_INVALID',
        task === undefined
          ? `Allocation "${alloc.ID.slice(0, 8)}" is running the following tasks:\n  * ${tasks.join('\n  * ')}\n\nPlease specify the task.`
          : `Could not find task named: ${task}`,
        { tasks },
      );
    process.stdout.write(await jobs.logs(alloc, task, flags.stderr ? 'stderr' : 'stdout'));
  }
}
