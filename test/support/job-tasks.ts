import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { killTaskRun } from '../../packages/harness/src/agent/allocations/task-runner.js';
import type { TaskRun } from '../../packages/harness/src/agent/state/job-records.js';

/** Every task the jobs of the agent with this data dir started, by the PIDs their supervisors noted: killed (their whole group). */
export async function killTasks(dataDir: string): Promise<void> {
  const allocDir = join(dataDir, 'alloc');
  for (const alloc of await readdir(allocDir).catch(() => [] as string[])) {
    for (const file of await readdir(join(allocDir, alloc)).catch(() => [] as string[])) {
      if (!file.endsWith('.run.json')) continue;
      const run = JSON.parse(await readFile(join(allocDir, alloc, file), 'utf8').catch(() => '{}')) as Partial<TaskRun>;
      killTaskRun({
        pid: run.pid ?? 0,
        startTicks: run.startTicks ?? 0,
        supervisorPid: run.supervisorPid ?? 0,
        supervisorStartTicks: run.supervisorStartTicks,
      });
    }
  }
}
