import { readdir, readFile, stat } from 'node:fs/promises';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { mountsAtOrBelow } from '@dhv/sdk/host';
import { expectEventually, expectForeignLoopDiskFreed, withJobs } from './support/job-tasks.js';
import type { TempAgent } from './support/dhv-agent.js';
import { root, skipUnless, tool } from './support/kit.js';

interface Scenario {
  files: Record<string, string>;
}
const vectors = (name: string) =>
  JSON.parse(readFileSync(new URL(`./vectors/real-agent/${name}`, import.meta.url), 'utf8')) as Scenario;
const seedFlow = vectors('01-seed-flow-mkdir.json');
const claims = vectors('03-claims.json');

const it = withJobs();

/** The IDs of the processes whose command line or root shows they belong to this agent's allocations. */
function supervisorsOf(agent: TempAgent): number[] {
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(join(agent.dataDir, 'alloc'));
      } catch {
        return false;
      }
    })
    .map(Number);
}
describe
  .skipIf(
    skipUnless(
      'jobs whose tasks mount host volumes',
      root(),
      tool('unshare', 'util-linux'),
      tool('setpriv', 'util-linux'),
    ),
  )
  .concurrent('dhv job run: tasks that really run with their volume mounted', () => {
    it('a task as nobody writes into a 0750 dhv-mkdir volume; delete and update are refused until the job stops', async ({
      jobs,
    }) => {
      const volume = await jobs.json('volume', 'create', await jobs.file('mk1.hcl', seedFlow.files['mk1.hcl']!));
      const id = volume.Volume?.ID ?? volume.ID;
      const run = await jobs.dhv('job', 'run', await jobs.file('job.nomad.hcl', seedFlow.files['job.nomad.hcl']!));
      expect(run.stderr).toBe('');
      expect(run.exitCode).toBe(0);
      expect(run.stdout).toMatch(/Allocation "[0-9a-f]{8}" status "running"/);
      const status = await jobs.json('job', 'status', 'writer');
      const alloc = status.Allocations[0];
      expect(alloc.ClientStatus).toBe('running');

      // Nomad's exec driver gives `nobody` cap_dac_override: the 0750 root-owned folder is writable to it.
      const hostPath = (await jobs.json('volume', 'status', id)).HostPath as string;
      expect(((await stat(hostPath)).mode & 0o777).toString(8)).toBe('750');
      await expectEventually(
        async () => (await jobs.dhv('alloc', 'logs', '-job', 'writer')).stdout === '/srv/data rw\n',
      );
      expect(await readFile(join(hostPath, 'hello.txt'), 'utf8')).toBe('written-by-a-task\n');
      // The mount lives in the task's own namespace: the host's mount table does not show it.
      expect(await mountsAtOrBelow(jobs.dir)).toEqual([]);

      const withClaim = await jobs.json('volume', 'status', id);
      expect(withClaim.Allocations.map((a: { ID: string }) => a.ID)).toEqual([alloc.ID]);
      expect((await jobs.dhv('volume', 'status', id)).stdout).toMatch(
        /Allocations\nID +Node ID +Task Group.*\n[0-9a-f]{8} .* running /,
      );

      for (const force of [[], ['-force']]) {
        const refused = await jobs.dhv('volume', 'delete', ...force, id);
        expect(refused.exitCode).toBe(1);
        expect(refused.stderr).toContain(`Error: volume ${id} in use by allocations: [${alloc.ID}]`);
      }
      const update = seedFlow.files['mk1.hcl']!.replace('name ', `id = "${id}"\nname `).replace('20MiB', '30MiB');
      const updateRefused = await jobs.dhv('volume', 'create', await jobs.file('mk1-upd.hcl', update));
      expect(updateRefused.stderr).toContain(
        `validating volume "${id}" update failed: 1 error occurred:\n\t* cannot update a volume in use: claimed by allocs (${alloc.ID})`,
      );

      const stop = await jobs.dhv('job', 'stop', 'writer');
      expect(stop.exitCode).toBe(0);
      expect((await jobs.json('alloc', 'status', alloc.ID)).ClientStatus).toBe('complete');
      expect((await jobs.json('volume', 'status', id)).Allocations).toBeUndefined();
      expect(supervisorsOf(jobs)).toEqual([]);
      expect((await jobs.dhv('volume', 'create', join(jobs.dir, 'mk1-upd.hcl'))).exitCode).toBe(0);
      const deleted = await jobs.dhv('volume', 'delete', id);
      expect(deleted.stdout).toBe(`Successfully deleted volume "${id}"!\n`);
      expect((await jobs.dhv('job', 'stop', '-purge', 'writer')).exitCode).toBe(0);
      expect(await readdir(join(jobs.dataDir, 'alloc'))).toEqual([]);
    });

    it("a task's mount namespace holds only its own mounts: the host's others (a loop volume unmounted elsewhere) are not pinned", async ({
      jobs,
    }) => {
      // A loop-mounted disk of the host's, unmounted and detached while the task runs: the task's
      // namespace must not keep its filesystem, so the kernel lets the device go.
      await expectForeignLoopDiskFreed(jobs, jobs.dir);
    });

    it('a read_only mount is read-only in the kernel: the task sees ro and its write fails', async ({ jobs }) => {
      const spec = claims.files['shared.hcl']!.replace(
        'capability {',
        'capability {\n  access_mode     = "single-node-reader-only"\n  attachment_mode = "file-system"\n}\ncapability {',
      );
      await jobs.json('volume', 'create', await jobs.file('shared.hcl', spec));
      const job = claims.files['reader-ok.nomad.hcl']!.replace('grep', "touch /srv/data/x 2>&1 | sed 's/.*: //'; grep");
      expect((await jobs.dhv('job', 'run', await jobs.file('reader.hcl', job))).exitCode).toBe(0);
      await expectEventually(
        async () => (await jobs.dhv('alloc', 'logs', '-job', 'reader')).stdout === 'Read-only file system\nro\n',
      );
      expect((await jobs.dhv('job', 'stop', '-purge', 'reader')).exitCode).toBe(0);
    });

    it("refuses what Nomad's client refuses, with its task events: root under exec, a mount under raw_exec", async ({
      jobs,
    }) => {
      await jobs.json('volume', 'create', await jobs.file('shared.hcl', claims.files['shared.hcl']!));
      const asRoot = claims.files['sticky.nomad.hcl']!.replace(
        'driver = "exec"',
        'driver = "exec"\n      user   = "root"',
      );
      await jobs.dhv('job', 'run', await jobs.file('root.hcl', asRoot));
      await jobs.dhv('job', 'run', await jobs.file('raw.hcl', claims.files['raw.nomad.hcl']!));
      const events = async (job: string) => {
        const [alloc] = (await jobs.json('job', 'status', job)).Allocations;
        expect(alloc.ClientStatus).toBe('failed');
        return alloc.TaskStates.t.Events.map(
          (e: { Type: string; DisplayMessage: string }) => `${e.Type} | ${e.DisplayMessage}`,
        );
      };
      expect(await events('sticky')).toEqual([
        'Received | Task received by client',
        'Task Setup | Building Task Directory',
        'Task hook failed | validate: running as user "root" is disallowed',
        'Not Restarting | Error was unrecoverable',
      ]);
      expect(await events('raw')).toEqual([
        'Received | Task received by client',
        'Task Setup | Building Task Directory',
        'Task hook failed | volumes: task driver "raw_exec" for "t" does not support host volumes',
        'Not Restarting | Error was unrecoverable',
      ]);
      // Failed allocations hold no claim: the volume deletes.
      expect((await jobs.dhv('volume', 'delete', 'shared')).exitCode).toBe(0);
    });

    it('agent restart leaves the task running; --reboot kills it and runs it again after the restore', async ({
      jobs,
    }) => {
      await jobs.json('volume', 'create', await jobs.file('mk1.hcl', seedFlow.files['mk1.hcl']!));
      expect(
        (await jobs.dhv('job', 'run', await jobs.file('job.nomad.hcl', seedFlow.files['job.nomad.hcl']!))).exitCode,
      ).toBe(0);
      const [alloc] = (await jobs.json('job', 'status', 'writer')).Allocations;
      const taskPid = async () => {
        const dir = join(jobs.dataDir, 'alloc', alloc.ID);
        const note = (await readdir(dir)).find((f) => f.endsWith('.run.json'))!;
        return (JSON.parse(await readFile(join(dir, note), 'utf8')) as { pid: number }).pid;
      };
      const before = await taskPid();
      expect((await jobs.dhv('agent', 'restart')).exitCode).toBe(0);
      expect(await taskPid()).toBe(before);
      expect((await jobs.json('alloc', 'status', alloc.ID)).ClientStatus).toBe('running');

      const reboot = await jobs.dhv('agent', 'restart', '--reboot');
      expect(reboot.exitCode).toBe(0);
      expect(await taskPid()).not.toBe(before);
      const after = await jobs.json('alloc', 'status', alloc.ID);
      expect(after.ClientStatus).toBe('running');
      expect(after.TaskStates.t.Events.map((e: { Type: string }) => e.Type)).toContain('Restarting');
      expect((await jobs.dhv('job', 'stop', '-purge', 'writer')).exitCode).toBe(0);
      expect(supervisorsOf(jobs)).toEqual([]);
    });

    it('places a job blocked by a single writer as soon as the writer stops, without a new job run', async ({
      jobs,
    }) => {
      const ssw = await jobs.json('volume', 'create', await jobs.file('ssw.hcl', claims.files['ssw.hcl']!));
      const id = ssw.Volume?.ID ?? ssw.ID;
      // The second writer is blocked: Nomad's monitor exits 2 for it.
      for (const [job, exit] of [
        ['writer1', 0],
        ['writer2', 2],
      ] as const)
        expect(
          (await jobs.dhv('job', 'run', await jobs.file(`${job}.hcl`, claims.files[`${job}.nomad.hcl`]!))).exitCode,
        ).toBe(exit);
      expect((await jobs.json('job', 'status', 'writer2')).Allocations).toEqual([]);
      expect((await jobs.dhv('job', 'stop', 'writer1')).exitCode).toBe(0);
      const [placed] = (await jobs.json('job', 'status', 'writer2')).Allocations;
      expect(placed.ClientStatus).toBe('running');
      // As the real agent's last step shows: the volume is now the second writer's.
      expect((await jobs.dhv('volume', 'delete', id)).stderr).toContain(`in use by allocations: [${placed.ID}]`);
      expect((await jobs.dhv('job', 'stop', '-purge', 'writer2')).exitCode).toBe(0);
    });

    it('keeps a sticky claim after job stop, the same claim for the next run, and drops it at purge', async ({
      jobs,
    }) => {
      const shared = await jobs.json('volume', 'create', await jobs.file('shared.hcl', claims.files['shared.hcl']!));
      const volumeId = shared.Volume?.ID ?? shared.ID;
      const sticky = await jobs.file('sticky.hcl', claims.files['sticky.nomad.hcl']!);
      expect((await jobs.dhv('job', 'run', sticky)).exitCode).toBe(0);
      const [claim] = await jobs.json('volume', 'claim', 'list');
      expect(claim).toMatchObject({
        Namespace: 'default',
        JobID: 'sticky',
        TaskGroupName: 'g',
        VolumeID: volumeId,
        VolumeName: 'shared',
      });
      expect((await jobs.dhv('volume', 'claim', 'list')).stdout).toBe(
        `ID        Namespace  Job ID  Volume ID  Volume Name\n${claim.ID.slice(0, 8)}  default    sticky  ${volumeId.slice(0, 8)}   shared\n`,
      );
      expect((await jobs.dhv('job', 'stop', 'sticky')).exitCode).toBe(0);
      expect((await jobs.json('volume', 'claim', 'list')).map((c: { ID: string }) => c.ID)).toEqual([claim.ID]);
      expect((await jobs.dhv('job', 'run', sticky)).exitCode).toBe(0);
      const [again] = await jobs.json('volume', 'claim', 'list');
      expect(again.ID).toBe(claim.ID);
      expect(again.AllocID).not.toBe(claim.AllocID);
      expect((await jobs.dhv('job', 'stop', '-purge', 'sticky')).exitCode).toBe(0);
      expect((await jobs.dhv('volume', 'claim', 'list')).stdout).toBe('No task group host volume claims found\n');
    });

    it('a delete racing a job run of its volume either deletes it before any placement or is refused: never a task on a deleted volume', async ({
      jobs,
    }) => {
      const jobFile = await jobs.file('job.nomad.hcl', seedFlow.files['job.nomad.hcl']!);
      const specFile = await jobs.file('mk1.hcl', seedFlow.files['mk1.hcl']!);
      for (let round = 0; round < 3; round++) {
        const volume = await jobs.json('volume', 'create', specFile);
        const id = volume.Volume?.ID ?? volume.ID;
        const [run, deleted] = await Promise.all([jobs.dhv('job', 'run', jobFile), jobs.dhv('volume', 'delete', id)]);
        const running = (
          (await jobs.json('job', 'status', 'writer')).Allocations as Array<{ ClientStatus: string }>
        ).filter((a) => a.ClientStatus === 'running');
        if (deleted.exitCode === 0) {
          // The delete came first: nothing was placed on the volume, and nothing of it is left.
          expect(run.exitCode, run.stdout).toBe(2);
          expect(running).toEqual([]);
          expect((await jobs.json('volume', 'status')).map((v: { ID: string }) => v.ID)).not.toContain(id);
        } else {
          // The placement came first: the volume is in use, and the task's file is on it.
          expect(deleted.stderr).toContain(`volume ${id} in use by allocations`);
          expect(running).toHaveLength(1);
          const hostPath = (await jobs.json('volume', 'status', id)).HostPath as string;
          await expectEventually(async () => existsSync(join(hostPath, 'hello.txt')));
        }
        expect((await jobs.dhv('job', 'stop', '-purge', 'writer')).exitCode).toBe(0);
        if (deleted.exitCode !== 0) expect((await jobs.dhv('volume', 'delete', id)).exitCode).toBe(0);
      }
    });

    it('runs a job as the first command on a fresh data dir, starting the agent first', async ({ jobs }) => {
      const job =
        'job "first" {\n  type = "batch"\n  group "g" {\n    task "t" {\n      driver = "raw_exec"\n      config {\n        command = "/bin/echo"\n        args = ["hi"]\n      }\n    }\n  }\n}\n';
      // Before: placement held the agent shared and the start waited on it, 60 s, then "the agent is busy".
      const run = await jobs.dhv('job', 'run', await jobs.file('first.hcl', job));
      expect(run.stderr).toBe('');
      expect(run.exitCode).toBe(0);
      expect(run.stdout).toMatch(/Allocation "[0-9a-f]{8}" status/);
    });

    it('prints a placement failure as Nomad does, and places nothing', async ({ jobs }) => {
      await jobs.json('volume', 'create', await jobs.file('shared.hcl', claims.files['shared.hcl']!));
      const file = await jobs.file('ro.hcl', claims.files['ro-default-caps.nomad.hcl']!);
      const run = await jobs.dhv('job', 'run', file);
      // Nomad's monitor exits 2 on a placement failure; -detach only registers.
      expect(run.exitCode).toBe(2);
      expect(run.stdout).toContain(
        'Task Group "g" (failed to place 1 allocation):\n      * Constraint "missing compatible host volumes": 1 nodes excluded by filter',
      );
      const status = await jobs.dhv('job', 'status', 'ro-default');
      expect(status.stdout).toContain(
        'Placement Failure\nTask Group "g":\n  * Constraint "missing compatible host volumes": 1 nodes excluded by filter\n',
      );
      expect(status.stdout).toContain('Allocations\nNo allocations placed');
      expect((await jobs.dhv('job', 'run', '-detach', file)).exitCode).toBe(0);
    });
  });

/** A client whose exec driver allows every default capability but dac_override, as operators harden it. */
const HARDENED_CONFIG =
  'plugin "exec" {\n  config {\n    allow_caps = ["chown", "fowner", "fsetid", "kill", "setgid", "setuid", "setpcap", "net_bind_service", "sys_chroot", "mknod", "audit_write", "setfcap"]\n  }\n}\n';
const onHardenedClient = withJobs(() => HARDENED_CONFIG);

describe.skipIf(
  skipUnless('jobs on a hardened client', root(), tool('unshare', 'util-linux'), tool('setpriv', 'util-linux')),
)('dhv job run on a hardened client (--config: the exec driver without dac_override)', () => {
  onHardenedClient(
    "a task as nobody cannot write the 0750 root-owned volume it writes on a default client: the folder's mode decides",
    async ({ jobs }) => {
      await jobs.json('volume', 'create', await jobs.file('mk1.hcl', seedFlow.files['mk1.hcl']!));
      expect(
        (await jobs.dhv('job', 'run', await jobs.file('job.nomad.hcl', seedFlow.files['job.nomad.hcl']!))).exitCode,
      ).toBe(0);
      // The task prints its mount after its write: by then the write's error is in its stderr.
      await expectEventually(
        async () => (await jobs.dhv('alloc', 'logs', '-job', 'writer')).stdout === '/srv/data rw\n',
      );
      expect((await jobs.dhv('alloc', 'logs', '-stderr', '-job', 'writer')).stdout).toMatch(
        /cannot create \/srv\/data\/hello\.txt: Permission denied/,
      );
      expect((await jobs.dhv('job', 'stop', '-purge', 'writer')).exitCode).toBe(0);
    },
  );
});
