import { execFileSync } from 'node:child_process';
import { copyFile, mkdir, readdir, readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import { expect } from 'vitest';
import { killTaskRun } from '../../packages/harness/src/agent/allocations/task-runner.js';
import type { TaskRun } from '../../packages/harness/src/agent/state/job-records.js';
import { testWithAgent, type TempAgent } from './dhv-agent.js';
import { builtPlugin } from './checkout-paths.js';
import { mountLoopDisk, releaseLoopDisk } from './loop-disk.js';

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

/** A test with an agent of its own whose plugin dir holds dhv-mkdir, its tasks killed after it. */
export function withJobs(config?: (dir: string) => string) {
  return testWithAgent(config ? { config } : {}).extend<{ jobs: TempAgent }>({
    jobs: async ({ agent }, use) => {
      await copyFile(builtPlugin('dhv-mkdir'), join(agent.pluginDir, 'dhv-mkdir'));
      try {
        await use(agent);
      } finally {
        await killTasks(agent.dataDir);
      }
    },
  });
}

/** Polls `check` for up to 10 s; fails the test when it never holds. */
export async function expectEventually(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  expect(await check()).toBe(true);
}

/** A service job `name` of one `exec` task that runs `script` with `/bin/sh -c` (HCL's template markers escaped). */
export function execJob(name: string, script: string): string {
  const hclString = JSON.stringify(script).replace(/([$%])\{/g, '$1$1{');
  return [
    `job "${name}" {`,
    '  type = "service"',
    '  group "g" {',
    '    task "t" {',
    '      driver = "exec"',
    `      config {\n        command = "/bin/sh"\n        args = ["-c", ${hclString}]\n      }`,
    '    }',
    '  }',
    '}',
    '',
  ].join('\n');
}

/**
 * Mounts a loop disk of the host's at a new folder in `parent`, runs a task, then unmounts the
 * disk and detaches its device while the task runs: passes only when the kernel frees the device,
 * that is when the task's mount namespace did not keep the disk's filesystem.
 */
export async function expectForeignLoopDiskFreed(jobs: TempAgent, parent: string): Promise<void> {
  const foreign = join(parent, 'foreign-mount');
  await mkdir(foreign);
  const disk = mountLoopDisk(join(jobs.dir, 'foreign.img'), foreign, 16 * 1024 * 1024);
  try {
    const job = await jobs.file('looker.hcl', execJob('looker', 'echo started; exec sleep 300'));
    expect((await jobs.dhv('job', 'run', job)).exitCode).toBe(0);
    await expectEventually(async () => (await jobs.dhv('alloc', 'logs', '-job', 'looker')).stdout === 'started\n');
    execFileSync('/usr/bin/umount', [foreign]);
    execFileSync('/usr/sbin/losetup', ['--detach', disk.device]);
    const backing = `/sys/block/${basename(disk.device)}/loop/backing_file`;
    await expectEventually(async () => !existsSync(backing));
    expect((await jobs.dhv('job', 'stop', '-purge', 'looker')).exitCode).toBe(0);
  } finally {
    await jobs.dhv('job', 'stop', '-purge', 'looker');
    releaseLoopDisk(disk);
  }
}
