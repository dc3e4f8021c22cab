import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isRunningProcess, signalProcess, signalRecordedGroup } from '@dhv/sdk/host';

/** Every task the jobs of the agent with this data dir started, by the PIDs their supervisors noted: killed (their whole group). */
export async function killTasks(dataDir: string): Promise<void> {
  const allocDir = join(dataDir, 'alloc');
  for (const alloc of await readdir(allocDir).catch(() => [] as string[])) {
    for (const file of await readdir(join(allocDir, alloc)).catch(() => [] as string[])) {
      if (!file.endsWith('.run.json')) continue;
      const run = JSON.parse(await readFile(join(allocDir, alloc, file), 'utf8').catch(() => '{}')) as {
        pid?: number;
        startTicks?: number;
        supervisorPid?: number;
        supervisorStartTicks?: number;
      };
      // Only while each is still the process the supervisor noted: its PID may be another's by now.
      if (run.supervisorPid && isRunningProcess(run.supervisorPid, run.supervisorStartTicks ?? 0))
        signalProcess(run.supervisorPid, 'SIGKILL');
      if (run.pid && run.pid > 1) signalRecordedGroup(run.pid, run.startTicks, 'SIGKILL');
    }
  }
}
