import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { describe, expect } from 'vitest';
import { bashPlugin, tempAgent, testWithAgent, volumeHcl } from './support/dhv-agent.js';
import { killAll, pidWrittenTo, processAlive } from './support/processes.js';

/**
 * Each test has an agent of its own, so they run side by side. `pidsToKill`: plugin
 * processes that dhv's kill -9 orphaned, SIGKILLed when the test ends, before its agent's
 * folder goes (it depends on `agent`, so vitest tears it down first).
 */
const it = testWithAgent().extend<{ pidsToKill: number[] }>({
  pidsToKill: async ({ agent }, use) => {
    void agent; // asked for only to be set up before, and torn down after, this fixture
    const pids: number[] = [];
    try {
      await use(pids);
    } finally {
      killAll(pids);
    }
  },
});

/** kill -9, then wait for the exit, which may already have happened. */
async function killHard(child: ChildProcess): Promise<void> {
  const exited = new Promise((r) => child.once('exit', r));
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGKILL');
  await exited;
}

async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((r) => setTimeout(r, 5));
}

describe.concurrent('dhv agent restart', () => {
  it('restores every volume from client state and fingerprints them again', async ({ agent }) => {
    await agent.plugin('p', bashPlugin());
    const existing = join(agent.dir, 'existing');
    await mkdir(existing);
    const a = await agent.json(
      'volume',
      'create',
      await agent.file('a.hcl', volumeHcl({ name: 'a', plugin_id: 'p', capacity_min: '1MiB', capacity_max: '1MiB' })),
    );
    const b = await agent.json(
      'volume',
      'create',
      await agent.file('b.hcl', volumeHcl({ name: 'b', plugin_id: 'mkdir' })),
    );
    const c = await agent.json(
      'volume',
      'register',
      await agent.file('c.hcl', volumeHcl({ name: 'c', host_path: existing })),
    );
    await rm(a.Volume.HostPath, { recursive: true }); // restore must create it again
    await writeFile(join(b.Volume.HostPath, 'data'), 'kept');

    const run = await agent.dhv('agent', 'restart');
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toContain('==> Restored 3 of 3 host volume(s)');
    expect(run.stdout).toContain('==> Plugins: mkdir 0.0.1, p 1.0.0');
    expect(existsSync(a.Volume.HostPath)).toBe(true);
    expect(await readFile(join(b.Volume.HostPath, 'data'), 'utf8')).toBe('kept');
    const node = await agent.json('node', 'status');
    expect(Object.fromEntries(Object.entries(node.HostVolumes).map(([k, v]: [string, any]) => [k, v.ID]))).toEqual({
      a: a.Volume.ID,
      b: b.Volume.ID,
      c: c.Volume.ID,
    });
    // The host's attributes (kernel.name, ...) beside exactly the plugins' fingerprints.
    expect(Object.fromEntries(Object.entries(node.Attributes).filter(([k]) => k.startsWith('plugins.')))).toEqual({
      'plugins.host_volume.mkdir.version': '0.0.1',
      'plugins.host_volume.p.version': '1.0.0',
    });
  });

  it('publishes no dynamic volume when a plugin went missing, as a real agent does, says so loudly, and brings them back with the plugin', async ({
    agent,
  }) => {
    await agent.plugin('p', bashPlugin());
    const lost = await agent.json(
      'volume',
      'create',
      await agent.file('a.hcl', volumeHcl({ name: 'lost', plugin_id: 'p' })),
    );
    const kept = await agent.json(
      'volume',
      'create',
      await agent.file('b.hcl', volumeHcl({ name: 'kept', plugin_id: 'mkdir' })),
    );
    const plugin = await readFile(join(agent.pluginDir, 'p'), 'utf8');
    await rm(join(agent.pluginDir, 'p'));

    const run = await agent.dhv('agent', 'restart');
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toContain('==> Restore failed: no dynamic host volume is reported');
    expect(run.stdout).toMatch(
      new RegExp(`✗ Host volume "${lost.Volume.ID.slice(0, 8)}" lost unavailable: .*no such plugin`),
    );
    expect(run.stderr).toMatch(
      /warning: failed to restore state: .*no such plugin[\s\S]*The plugin "p" of volume .* is missing from the plugin directory\. A real Nomad agent then reports NO dynamic host volume/,
    );

    const node = await agent.json('node', 'status');
    expect(node.HostVolumes).toEqual({});
    // A node that reports no host volume at all leaves the servers' states as they were.
    expect(await agent.json('volume', 'status', kept.Volume.ID)).toMatchObject({ State: 'ready' });
    expect(await agent.json('volume', 'status', lost.Volume.ID)).toMatchObject({
      StateError: expect.stringMatching(/no such plugin/),
    });
    expect((await agent.dhv('node', 'status')).stderr).toMatch(
      /A real Nomad agent then reports NO dynamic host volume/,
    );

    await agent.plugin('p', plugin);
    expect((await agent.dhv('agent', 'restart')).stdout).toContain('==> Restored 2 of 2 host volume(s)');
    expect(Object.keys((await agent.json('node', 'status')).HostVolumes)).toEqual(['kept', 'lost']);
  });

  it('reports the path create returns on restore, and warns that the plugin is not idempotent when it moved', async ({
    agent,
  }) => {
    const where = join(agent.dir, 'where');
    await writeFile(where, 'first');
    await agent.plugin(
      'moving',
      `#!/bin/bash\ncase "$1" in\n  fingerprint) echo '{"version": "1"}' ;;\n  create) d="$DHV_VOLUMES_DIR/$(< "${where}")-$DHV_VOLUME_ID"; /bin/mkdir -p "$d"; echo "{\\"path\\": \\"$d\\"}" ;;\n  delete) ;;\nesac\n`,
    );
    const v = await agent.json(
      'volume',
      'create',
      await agent.file('m.hcl', volumeHcl({ name: 'm', plugin_id: 'moving' })),
    );
    expect(v.Volume.HostPath).toBe(join(agent.volumesDir, `first-${v.Volume.ID}`));
    await writeFile(where, 'second');
    const run = await agent.dhv('agent', 'restart');
    expect(run.stderr).toMatch(
      /came back at .*second-.*, not at its saved path .*first-.*: its plugin's create is not idempotent/,
    );
    expect((await agent.json('node', 'status')).HostVolumes.m.Path).toBe(
      join(agent.volumesDir, `second-${v.Volume.ID}`),
    );
  });

  it('skips broken plugins in the plugin dir with the reason, and keeps the good ones and the built-in mkdir', async ({
    agent,
  }) => {
    await agent.plugin('good', bashPlugin({ version: 'v2.1' }));
    await agent.plugin('crashes', '#!/bin/bash\necho "boom" >&2\nexit 2\n');
    await agent.plugin('slow', '#!/bin/bash\n/bin/sleep 3\necho \'{"version": "1"}\'\n');
    await agent.plugin('bad-version', '#!/bin/bash\necho \'{"version": "one"}\'\n');
    await agent.plugin('no-json', '#!/bin/bash\necho hello\n');
    await agent.plugin('mkdir', bashPlugin({ version: '9.9.9' }));
    await writeFile(join(agent.pluginDir, 'not-executable'), '#!/bin/bash\necho \'{"version": "1"}\'\n');
    await mkdir(join(agent.pluginDir, 'a-directory'));

    const out = await agent.json('agent', 'fingerprint', '--allow-skipped');
    expect(out.Attributes).toEqual({
      'plugins.host_volume.good.version': '2.1.0',
      'plugins.host_volume.mkdir.version': '0.0.1',
    });
    const reasons = Object.fromEntries(out.Skipped.map((s: { ID: string; Reason: string }) => [s.ID, s.Reason]));
    // Without an execute bit a file is not a candidate: a real agent neither runs nor logs it.
    expect(Object.keys(reasons).sort()).toEqual(['bad-version', 'crashes', 'mkdir', 'no-json', 'slow']);
    expect(reasons.crashes).toMatch(/exit status 2/);
    expect(reasons.slow).toMatch(/signal: killed\nthe plugin ran past its 1s deadline/);
    expect(reasons.mkdir).toMatch(/the built-in mkdir plugin is what the node publishes/);

    // A skipped plugin fails a CI gate on the fingerprint, in one line after the table that says why.
    const human = await agent.dhv('agent', 'fingerprint');
    expect(human.exitCode).toBe(1);
    expect(human.stdout).toMatch(/Skipped Plugins\nID\s+Reason\n/);
    expect(human.stderr).toBe(
      'Error: 5 plugins skipped (bad-version, crashes, mkdir, no-json, slow; Skipped Plugins above says why); --allow-skipped exits 0 with the others published\n',
    );
    // A volume on the built-in mkdir is never handed to the file of that name.
    const v = await agent.json(
      'volume',
      'create',
      await agent.file('m.hcl', volumeHcl({ name: 'm', plugin_id: 'mkdir' })),
    );
    expect(v.Volume.CapacityBytes).toBe(0);
    expect((await agent.dhv('agent', 'restart')).exitCode).toBe(0);
  });

  it('lets a dynamic volume replace a static one of the same name, with a warning', async ({ onTestFinished }) => {
    const agent = await tempAgent({
      config: (dir) =>
        `client {\n  host_volume "data" {\n    path = "${dir}/static-data"\n  }\n  host_volume "cloud-img" {\n    path = "${dir}/cloud-img"\n    read_only = true\n  }\n}\n`,
    });
    onTestFinished(() => agent.cleanup());
    expect((await agent.json('node', 'status')).HostVolumes.data).toEqual({
      Name: 'data',
      ID: '',
      Path: join(agent.dir, 'static-data'),
      ReadOnly: false,
    });
    // The servers place a volume only on a node that does not report the name yet: name it by node_id, as an update would.
    const node0 = await agent.json('node', 'status');
    const v = await agent.json(
      'volume',
      'create',
      await agent.file('d.hcl', volumeHcl({ name: 'data', plugin_id: 'mkdir', node_id: node0.ID })),
    );
    expect(v.Warnings).toEqual([expect.stringMatching(/^overriding static host volume with dynamic: name=data id=/)]);
    const node = await agent.json('node', 'status');
    expect(node.HostVolumes).toEqual({
      'cloud-img': { Name: 'cloud-img', ID: '', Path: join(agent.dir, 'cloud-img'), ReadOnly: true },
      data: { Name: 'data', ID: v.Volume.ID, Path: v.Volume.HostPath, ReadOnly: false },
    });
    const human = await agent.dhv('node', 'status');
    expect(human.stderr).toMatch(
      /warning: dynamic host volume "data" .* replaces the static host volume of the same name/,
    );
  });
});

describe.concurrent('crash safety and concurrent dhv processes', () => {
  it('survives kill -9 of dhv in the middle of a create: restart works, the volume is absent, its name is free', async ({
    agent,
    pidsToKill,
  }) => {
    const marker = join(agent.dir, 'plugin.pid');
    const block = join(agent.dir, 'block');
    await writeFile(block, '');
    await agent.plugin(
      'hangs',
      bashPlugin({ createPrefix: `echo $$ > "${marker}"; while [ -e "${block}" ]; do /bin/sleep 0.05; done` }),
    );
    const child = agent.start(
      'volume',
      'create',
      await agent.file('h.hcl', volumeHcl({ name: 'h', plugin_id: 'hangs' })),
    );
    pidsToKill.push(await pidWrittenTo(marker));
    await killHard(child);

    const restart = await agent.json('agent', 'restart');
    expect(restart.Restored).toEqual([]);
    expect(restart.Failed).toEqual([]);
    await rm(block);
    const again = await agent.json(
      'volume',
      'create',
      await agent.file('h2.hcl', volumeHcl({ name: 'h', plugin_id: 'hangs' })),
    );
    expect(again.Volume.State).toBe('ready');
  });

  it('leaves client state that loads after kill -9 at each point of a create', async ({ agent, pidsToKill }) => {
    // The plugin says when it started (its PID) and waits for the test's go-ahead, so each
    // kill lands at a known point however fast or loaded the machine is.
    const reached = (name: string) => join(agent.dir, `reached-${name}`);
    const go = (name: string) => join(agent.dir, `go-${name}`);
    await agent.plugin(
      'stepped',
      bashPlugin({
        createPrefix: `echo $$ > "${agent.dir}/reached-$DHV_VOLUME_NAME"; while [ ! -e "${agent.dir}/go-$DHV_VOLUME_NAME" ]; do /bin/sleep 0.01; done`,
      }),
    );
    const points = ['as dhv starts', 'while the plugin runs', 'as the plugin answers'] as const;
    const names: string[] = [];
    for (const [i, point] of [...points, ...points].entries()) {
      const name = `k${i}`;
      names.push(name);
      const child = agent.start(
        'volume',
        'create',
        await agent.file(`${name}.hcl`, volumeHcl({ name, plugin_id: 'stepped' })),
      );
      if (point !== 'as dhv starts') {
        const pluginPid = await pidWrittenTo(reached(name));
        pidsToKill.push(pluginPid);
        if (point === 'as the plugin answers') {
          await writeFile(go(name), '');
          await until(() => !processAlive(pluginPid));
        }
      }
      await killHard(child);
      await writeFile(go(name), '');
    }
    const restart = await agent.json('agent', 'restart');
    expect(restart.Failed).toEqual([]);
    const volumes = await agent.json('volume', 'status');
    // The list holds Nomad's stubs (no HostPath): the paths are the node's HostVolumes.
    const hostVolumes = (await agent.json('node', 'status')).HostVolumes;
    for (const v of volumes) {
      expect(v).toMatchObject({ ID: expect.any(String), Name: expect.stringMatching(/^k\d$/), State: 'ready' });
      expect(hostVolumes[v.Name].Path).toBe(join(agent.volumesDir, v.ID));
    }
    // Every name is usable again: recorded ones are taken, the rest are free.
    const taken = new Set(volumes.map((v: { Name: string }) => v.Name));
    for (const name of names) {
      const run = await agent.dhv('volume', 'create', join(agent.dir, `${name}.hcl`));
      expect(run.exitCode, `${name}: ${run.stderr}`).toBe(taken.has(name) ? 1 : 0);
    }
  });

  it('loses nothing when two dhv processes create volumes at once on one data dir', async ({ agent }) => {
    await agent.plugin('p', bashPlugin());
    const names = (prefix: string) => Array.from({ length: 4 }, (_, i) => `${prefix}${i}`);
    for (const n of [...names('left'), ...names('right')])
      await agent.file(`${n}.hcl`, volumeHcl({ name: n, plugin_id: n.endsWith('0') ? 'mkdir' : 'p' }));
    const createAll = async (prefix: string) => {
      for (const n of names(prefix)) {
        const run = await agent.dhv('volume', 'create', join(agent.dir, `${n}.hcl`));
        expect(run.exitCode, run.stderr).toBe(0);
      }
    };
    await Promise.all([createAll('left'), createAll('right')]);
    const volumes = await agent.json('volume', 'status');
    expect(volumes.map((v: { Name: string }) => v.Name).sort()).toEqual([...names('left'), ...names('right')].sort());
    expect(Object.keys((await agent.json('node', 'status')).HostVolumes)).toHaveLength(8);
  });

  it('gives a name to exactly one of two processes racing to create it', async ({ agent }) => {
    const spec = await agent.file('same.hcl', volumeHcl({ name: 'same', plugin_id: 'mkdir' }));
    const [x, y] = await Promise.all([agent.dhv('volume', 'create', spec), agent.dhv('volume', 'create', spec)]);
    expect([x.exitCode, y.exitCode].sort()).toEqual([0, 1]);
    // The loser is refused by the client's name claim, or, if the winner was already reported, by placement.
    expect([x, y].find((r) => r.exitCode === 1)!.stderr).toMatch(
      /volume name already exists on this node|1 nodes had existing volume/,
    );
    expect(await agent.json('volume', 'status')).toHaveLength(1);
  });
});
