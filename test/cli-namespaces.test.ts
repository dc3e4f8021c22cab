import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { testWithAgent, volumeHcl, type TempAgent } from './support/dhv-agent.js';
import { dhvUnderStrace, finished, waitingForLock } from './support/gates.js';
import { DHV_BIN, root, skipUnless, tool } from './support/kit.js';
import { processTree, signalProcesses } from './support/processes.js';

const it = testWithAgent();

/** A volume spec of the built-in mkdir in `namespace`. */
async function spec(agent: TempAgent, name: string, namespace: string): Promise<string> {
  return agent.file(`${name}.hcl`, volumeHcl({ name, namespace, plugin_id: 'mkdir' }));
}

/** A job of one exec task that sleeps, in `namespace`; with `volume`, its group asks for that host volume. */
async function job(agent: TempAgent, id: string, namespace: string, volume?: string): Promise<string> {
  const wants = volume
    ? `volume "v" {\n  type = "host"\n  source = "${volume}"\n  access_mode = "single-node-writer"\n  attachment_mode = "file-system"\n}`
    : '';
  return agent.file(
    `${id}.nomad.hcl`,
    `job "${id}" {\n  namespace = "${namespace}"\n  type = "batch"\n  group "g" {\n${wants}\n    task "t" {\n      driver = "exec"\n      config {\n        command = "/bin/sleep"\n        args = ["3600"]\n      }\n    }\n  }\n}\n`,
  );
}

describe.concurrent('dhv namespace', () => {
  it('default always exists; apply, list, status and delete print what Nomad prints', async ({ agent }) => {
    await agent.dhv('node', 'status'); // makes the data dir
    expect((await agent.dhv('namespace', 'list')).stdout).toBe(
      'Name     Description\ndefault  Default shared namespace\n',
    );

    const applied = await agent.dhv('namespace', 'apply', 'analytics');
    expect([applied.exitCode, applied.stdout, applied.stderr]).toEqual([
      0,
      'Successfully applied namespace "analytics"!\n',
      '',
    ]);
    // Applied again with a description: the same namespace, changed; without one, the description stays.
    await agent.dhv('namespace', 'apply', '-description', 'Data team', 'analytics');
    await agent.dhv('namespace', 'apply', 'analytics');
    await agent.dhv('namespace', 'apply', 'bare');
    expect((await agent.dhv('namespace', 'list')).stdout).toBe(
      'Name       Description\nanalytics  Data team\nbare       <none>\ndefault    Default shared namespace\n',
    );
    const listed = await agent.json('namespace', 'list');
    expect(listed.map((n: { Name: string }) => n.Name)).toEqual(['analytics', 'bare', 'default']);
    expect(listed[0]).toEqual({
      Name: 'analytics',
      Description: 'Data team',
      Quota: '',
      Capabilities: null,
      NodePoolConfiguration: null,
      VaultConfiguration: null,
      ConsulConfiguration: null,
      Meta: null,
      CreateIndex: 2,
      ModifyIndex: 4,
      RequiredExtraClaims: null,
      OptionalExtraClaims: null,
    });

    expect((await agent.dhv('namespace', 'status', 'ana')).stdout).toBe(
      [
        'Name                   = analytics',
        'Description            = Data team',
        'Quota                  = <none>',
        'Enabled Drivers        = *',
        'Disabled Drivers       = <none>',
        'Enabled Network Modes  = *',
        'Disabled Network Modes = <none>',
        '',
      ].join('\n'),
    );
    expect((await agent.json('namespace', 'status', '-json', 'default')).Description).toBe('Default shared namespace');
    const none = await agent.dhv('namespace', 'status', 'nope');
    expect(none.exitCode).toBe(1);
    expect(none.stderr).toMatch(/^Error: Error retrieving namespaces: Namespace "nope" matched no namespaces\n/);
    await agent.dhv('namespace', 'apply', 'analytics-2');
    const several = await agent.dhv('namespace', 'status', 'anal');
    expect(several.stderr).toMatch(
      /^Error: Prefix matched multiple namespaces\n\nName +Description\nanalytics +Data team\n/,
    );

    const deleted = await agent.dhv('namespace', 'delete', 'analytics');
    expect([deleted.exitCode, deleted.stdout]).toEqual([0, 'Successfully deleted namespace "analytics"!\n']);
    expect(await agent.json('namespace', 'delete', 'bare')).toMatchObject({ Deleted: 'bare' });
    expect(await readdir(join(agent.dataDir, 'client', 'namespaces'))).toEqual(['analytics-2.json']);
  });

  it("refuses in Nomad's words: default, a missing namespace, a name Nomad refuses, a file", async ({ agent }) => {
    const dflt = await agent.dhv('namespace', 'delete', 'default');
    expect([dflt.exitCode, dflt.stdout]).toEqual([1, '']);
    expect(dflt.stderr).toMatch(/^Error: can not delete default namespace\n/);
    const missing = await agent.dhv('namespace', 'delete', 'nope');
    expect(missing.stderr).toMatch(/^Error: namespace not found\n/);
    const bad = await agent.dhv('namespace', 'apply', 'no/such');
    expect(bad.exitCode).toBe(1);
    expect(bad.stderr).toContain(
      'Error: Invalid namespace "no/such": 1 error occurred:\n\t* invalid name "no/such". Must match regex ^[a-zA-Z0-9-]{1,128}$\n',
    );
    const long = await agent.dhv('namespace', 'apply', '-description', 'x'.repeat(257), 'ok');
    expect(long.stderr).toContain('\t* description longer than 256\n');
    expect(JSON.parse((await agent.dhv('namespace', 'delete', 'default', '--json')).stderr).error.code).toBe(
      'NAMESPACE_IN_USE',
    );
    const file = await agent.dhv('namespace', 'apply', await agent.file('ns.hcl', 'name = "x"\n'));
    expect(file.exitCode).toBe(2);
    expect(file.stderr).toContain('dhv namespace apply takes a namespace name, not a specification file');
    expect((await agent.json('namespace', 'list')).map((n: { Name: string }) => n.Name)).toEqual(['default']);
  });

  it('a volume is created or registered only in a namespace that exists; a delete of the namespace keeps its host volumes, as Nomad', async ({
    agent,
  }) => {
    const create = await agent.dhv('volume', 'create', await spec(agent, 'warehouse', 'analytics'));
    expect([create.exitCode, create.stdout]).toEqual([1, '']);
    expect(create.stderr).toMatch(
      /^Error: volume validation failed: no such namespace "analytics"\n.*dhv namespace apply analytics/,
    );
    await agent.file('reg.hcl', volumeHcl({ name: 'reg', namespace: 'analytics', host_path: agent.dir }));
    const register = await agent.dhv('volume', 'register', join(agent.dir, 'reg.hcl'));
    expect(register.stderr).toMatch(/^Error: volume validation failed: no such namespace "analytics"\n/);
    expect(await readdir(agent.volumesDir).catch(() => [])).toEqual([]);

    await agent.dhv('namespace', 'apply', 'analytics');
    const volume = (await agent.json('volume', 'create', await spec(agent, 'warehouse', 'analytics'))).Volume;
    expect(volume.Namespace).toBe('analytics');
    // Nomad's delete looks at jobs, allocations and CSI volumes: a host volume does not hold its namespace.
    expect((await agent.dhv('namespace', 'delete', 'analytics')).exitCode).toBe(0);
    expect((await agent.json('volume', 'status', '-namespace', 'analytics')).map((v: { ID: string }) => v.ID)).toEqual([
      volume.ID,
    ]);
    const update = await agent.dhv(
      'volume',
      'create',
      '-namespace',
      'analytics',
      '-id',
      volume.ID,
      await spec(agent, 'warehouse', 'analytics'),
    );
    expect(update.stderr).toMatch(/^Error: volume validation failed: no such namespace "analytics"\n/);
    expect((await agent.dhv('volume', 'delete', '-namespace', 'analytics', volume.ID)).exitCode).toBe(0);
  });

  it("job run refuses a job in a namespace that does not exist, in Nomad's words; a blocked job holds its namespace", async ({
    agent,
  }) => {
    // A job run on an agent never started waits for itself (main's behaviour, not a namespace matter): start it first.
    await agent.dhv('agent', 'restart');
    const run = await agent.dhv('job', 'run', await job(agent, 'etl', 'analytics'));
    expect([run.exitCode, run.stdout]).toEqual([1, '']);
    expect(run.stderr).toMatch(/^Error: 1 error occurred:\n\t\* job "etl" is in nonexistent namespace "analytics"\n/);
    expect(await agent.json('job', 'status')).toEqual([]);

    await agent.dhv('namespace', 'apply', 'analytics');
    // No volume "nowhere": the job is registered, its allocation blocked, the job pending.
    const blocked = await agent.dhv('job', 'run', '-detach', await job(agent, 'etl', 'analytics', 'nowhere'));
    expect(blocked.exitCode).toBe(0);
    const refused = await agent.dhv('namespace', 'delete', 'analytics');
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toMatch(
      /^Error: 1 error occurred:\n\t\* namespace "analytics" has non-terminal jobs in regions: \[global\]\n/,
    );
    expect((await agent.dhv('job', 'stop', '-namespace', 'analytics', 'etl')).exitCode).toBe(0);
    expect((await agent.dhv('namespace', 'delete', 'analytics')).exitCode).toBe(0);
  });
});

describe
  .skipIf(skipUnless('jobs whose tasks run', root(), tool('unshare', 'util-linux'), tool('setpriv', 'util-linux')))
  .concurrent('dhv namespace delete with running allocations', () => {
    it('is refused while a job runs, and goes through once it is stopped', async ({ agent }) => {
      await agent.dhv('agent', 'restart');
      await agent.dhv('namespace', 'apply', 'batch');
      const run = await agent.dhv('job', 'run', await job(agent, 'sleeper', 'batch'));
      expect(run.exitCode, run.stderr).toBe(0);
      try {
        const refused = await agent.dhv('namespace', 'delete', 'batch');
        expect(refused.stderr).toMatch(
          /^Error: 2 errors occurred:\n\t\* namespace "batch" has non-terminal jobs in regions: \[global\]\n\t\* namespace "batch" has non-terminal allocations in regions: \[global\]\n/,
        );
      } finally {
        expect((await agent.dhv('job', 'stop', '-namespace', 'batch', 'sleeper')).exitCode).toBe(0);
      }
      expect((await agent.dhv('namespace', 'delete', 'batch')).exitCode).toBe(0);
    });
  });

/**
 * Starts `dhv <args>` under strace, which stops it (SIGSTOP) right after its first `syscall`
 * on `path`: a chosen instant, no sleep. Resolves once strace has seen it stopped, with a way
 * to let it go on.
 */
async function stoppedAfter(agent: TempAgent, path: string, syscall: string, args: string[]) {
  const log = join(agent.dir, `strace-${syscall}-${args.slice(0, 2).join('-')}.log`);
  const child = dhvUnderStrace(agent, args, { path, syscall, signal: 'STOP', log });
  const done = finished(child);
  const stopped = () => {
    const dhv = processTree(child.pid!)[1];
    // strace pads the PID column to a width: "812  ---" as well as "31760 ---".
    return (
      dhv !== undefined &&
      existsSync(log) &&
      new RegExp(`^${dhv} +--- stopped by SIGSTOP ---$`, 'm').test(readFileSync(log, 'utf8'))
    );
  };
  for (let i = 0; i < 4800 && !stopped() && child.exitCode === null; i++) await new Promise((r) => setTimeout(r, 25));
  if (!stopped()) throw new Error(`dhv ${args.join(' ')} never made its ${syscall} of ${path}: ${(await done).stderr}`);
  const dhv = processTree(child.pid!)[1]!;
  // strace counts `when` per thread: a later thread's first such call stops dhv again, and is let go at once.
  const resume = () => {
    const going = setInterval(() => signalProcesses([dhv], 'SIGCONT'), 25);
    void done.finally(() => clearInterval(going));
  };
  return { done, resume };
}

/** `dhv <args>` started beside a stopped one: resolves when it has finished or waits for a lock. */
async function startedBeside(agent: TempAgent, args: string[]) {
  const child = spawn(process.execPath, [DHV_BIN, ...args, '--data-dir', agent.dataDir], {
    cwd: agent.dir,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, DHV_DATA_DIR: undefined, NO_COLOR: '1' },
  });
  const done = finished(child);
  const waited = await Promise.race([done.then(() => false), waitingForLock(child).then(() => true)]);
  return { done, waited };
}

const b64 = (s: string) => Buffer.from(s).toString('base64url');

describe
  .skipIf(skipUnless('namespace races stopped by strace', tool('strace', 'strace')))
  .concurrent('namespaces in one line with the work that reads them (issue 34)', () => {
    it('a namespace delete waits for a job run that has checked the namespace: no job is left in a deleted namespace', async ({
      agent,
    }) => {
      await agent.dhv('agent', 'restart');
      await agent.dhv('namespace', 'apply', 'analytics');
      // Stopped right after its namespace check, at its read of the job's record (none yet).
      const run = await stoppedAfter(
        agent,
        join(agent.dataDir, 'client', 'jobs', `${b64('analytics')}.${b64('etl')}.json`),
        'openat',
        ['job', 'run', '-detach', await job(agent, 'etl', 'analytics', 'nowhere')],
      );
      const deletion = await startedBeside(agent, ['namespace', 'delete', 'analytics']);
      run.resume();
      expect((await run.done).code).toBe(0);
      const deleted = await deletion.done;
      expect(deletion.waited).toBe(true);
      expect(deleted.stderr).toMatch(/namespace "analytics" has non-terminal jobs/);
      const jobs = await agent.json('job', 'status', '-namespace', '*');
      const namespaces = (await agent.json('namespace', 'list')).map((n: { Name: string }) => n.Name);
      for (const j of jobs as Array<{ Namespace: string }>) expect(namespaces).toContain(j.Namespace);
    });

    it('two applies at once get their own ModifyIndex, each above every index before it', async ({ agent }) => {
      await agent.dhv('namespace', 'apply', 'first');
      // Stopped after it computed its index, as it makes sure the namespaces folder is there to write its record.
      const a = await stoppedAfter(agent, join(agent.dataDir, 'client', 'namespaces'), 'mkdir', [
        'namespace',
        'apply',
        'a',
      ]);
      const b = await startedBeside(agent, ['namespace', 'apply', 'b']);
      a.resume();
      expect((await a.done).code).toBe(0);
      expect((await b.done).code).toBe(0);
      expect(b.waited).toBe(true);
      const indexes = Object.fromEntries(
        (await agent.json('namespace', 'list')).map((n: { Name: string; ModifyIndex: number }) => [
          n.Name,
          n.ModifyIndex,
        ]),
      );
      expect(indexes.b).toBeGreaterThan(indexes.a);
      expect(indexes.a).toBeGreaterThan(indexes.first);
    });
  });
