import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { describe, expect } from 'vitest';
import type { TempAgent } from './support/dhv-agent.js';
import { expectEventually, expectForeignLoopDiskFreed, execJob, withJobs } from './support/job-tasks.js';
import { root, skipUnless, tool } from './support/kit.js';

/** An exec task's /dev, as Nomad's exec driver (libcontainer) builds it: the task's own, nothing of the host's mounts. */

const it = withJobs();

/** Runs `script` as an exec task of job `name` and returns the lines it printed before `end`; the task keeps running. */
async function taskPrints(jobs: TempAgent, name: string, script: string): Promise<string[]> {
  const job = await jobs.file(`${name}.hcl`, execJob(name, `${script}\necho end; exec sleep 300`));
  expect((await jobs.dhv('job', 'run', job)).exitCode).toBe(0);
  let stdout = '';
  await expectEventually(async () => {
    stdout = (await jobs.dhv('alloc', 'logs', '-job', name)).stdout;
    return stdout.endsWith('end\n');
  });
  return stdout.split('\n').slice(0, -2);
}

/** A fresh folder in the host's /dev/shm, removed after `body` even when it fails. */
async function inHostShm(body: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp('/dev/shm/dhv-task-dev-');
  try {
    await body(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe
  .skipIf(skipUnless("an exec task's own /dev", root(), tool('unshare', 'util-linux'), tool('setpriv', 'util-linux')))
  .concurrent("an exec task's /dev is its own, as under Nomad's exec driver", () => {
    it('a host filesystem mounted below /dev/shm is not pinned by the task: a loop disk there, unmounted while it runs, is freed', async ({
      jobs,
    }) => {
      await inHostShm((dir) => expectForeignLoopDiskFreed(jobs, dir));
    });

    it("the task's /dev/shm is a tmpfs of its own (64 MiB, 1777): its write never reaches the host's, whose files it does not see", async ({
      jobs,
    }) => {
      await inHostShm(async (dir) => {
        const written = `${dir}.task`;
        try {
          const lines = await taskPrints(
            jobs,
            'shm',
            [
              'ls -A /dev/shm | wc -l',
              `echo from-the-task > ${written} && cat ${written}`,
              'stat -c %a /dev/shm',
              "grep ' /dev/shm ' /proc/self/mounts",
            ].join('\n'),
          );
          expect(lines.slice(0, 3)).toEqual(['0', 'from-the-task', '1777']);
          expect(lines[3]).toMatch(/^\S+ \/dev\/shm tmpfs \S*size=65536k/);
          expect(existsSync(written)).toBe(false);
          expect((await jobs.dhv('job', 'stop', '-purge', 'shm')).exitCode).toBe(0);
        } finally {
          await jobs.dhv('job', 'stop', '-purge', 'shm');
          await rm(written, { force: true });
        }
      });
    });

    it('the device nodes work, /dev/ptmx opens a terminal in a fresh devpts, and no mount of the host is below /dev', async ({
      jobs,
    }) => {
      const lines = await taskPrints(
        jobs,
        'devices',
        [
          'echo discarded > /dev/null && echo null-written',
          'head -c 16 /dev/urandom | wc -c',
          'head -c 4 /dev/zero | od -An -tx1',
          '(echo x > /dev/full) 2>/dev/null || echo full-refused',
          'stat -c "%n %F %t:%T %a" /dev/null /dev/zero /dev/full /dev/random /dev/urandom /dev/tty',
          'readlink /dev/ptmx; ls -A /dev/pts',
          "script -qc tty /dev/null | tr -d '\\r'",
          "grep ' /dev' /proc/self/mounts | cut -d' ' -f2,3",
        ].join('\n'),
      );
      expect(lines).toEqual([
        'null-written',
        '16',
        ' 00 00 00 00',
        'full-refused',
        '/dev/null character special file 1:3 666',
        '/dev/zero character special file 1:5 666',
        '/dev/full character special file 1:7 666',
        '/dev/random character special file 1:8 666',
        '/dev/urandom character special file 1:9 666',
        '/dev/tty character special file 5:0 666',
        'pts/ptmx',
        'ptmx',
        '/dev/pts/0',
        '/dev tmpfs',
        '/dev/pts devpts',
        '/dev/shm tmpfs',
        '/dev/mqueue mqueue',
      ]);
      expect((await jobs.dhv('job', 'stop', '-purge', 'devices')).exitCode).toBe(0);
    });
  });
