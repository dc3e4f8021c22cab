import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { bashPlugin, testWithAgent, volumeHcl, type TempAgent } from './support/dhv-agent.js';

/** Each test has an agent of its own, so they run side by side. */
const it = testWithAgent({
  config: (dir) =>
    `client {\n  host_volume "cloud-img" {\n    path = "${dir}/cloud-img"\n    read_only = true\n  }\n}\n`,
});

/**
 * A bash stand-in for dhv-mkdir: these tests are about the agent, not the plugin (the
 * reference plugins run for real in agent-reboot and demo-seed).
 */
async function installMkdirPlugin(agent: TempAgent): Promise<void> {
  await agent.plugin('dhv-mkdir', bashPlugin({ version: '0.1.0' }));
}

describe.concurrent('dhv volume create, status and delete (the seed flow)', () => {
  it('creates a volume with the built-in mkdir and prints what nomad volume create prints', async ({ agent }) => {
    const spec = await agent.file(
      'test.hcl',
      volumeHcl({ name: 'test', plugin_id: 'mkdir' }, 'parameters {\n  mode = "0750"\n}'),
    );
    const run = await agent.dhv('volume', 'create', spec);
    expect(run.stderr).toBe('');
    expect(run.exitCode).toBe(0);
    const id = /^==> Created host volume test with ID ([0-9a-f-]{36})$/m.exec(run.stdout)?.[1];
    expect(id).toBeDefined();
    expect(run.stdout).toMatch(
      new RegExp(
        `^==> \\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(Z|[+-]\\d\\d:\\d\\d): Monitoring volume "${id!.slice(0, 8)}"\\.\\.\\.$`,
        'm',
      ),
    );
    expect(run.stdout).toMatch(/: Volume "test" ready\n$/);
    const detail = await agent.dhv('volume', 'status', id!);
    for (const line of [
      'ID        = ' + id,
      'Name      = test',
      'Namespace = default',
      'Plugin ID = mkdir',
      'Node Pool = default',
      'Capacity  = 0 B',
      'State     = ready',
      `Host Path = ${agent.volumesDir}/${id}`,
    ]) {
      expect(detail.stdout).toContain(line);
    }
    expect(((await stat(join(agent.volumesDir, id!))).mode & 0o777).toString(8)).toBe('750');
  });

  it('shows created volumes in node status beside the static volume, and in the volume list', async ({ agent }) => {
    await installMkdirPlugin(agent);
    const created = await agent.json(
      'volume',
      'create',
      await agent.file('a.hcl', volumeHcl({ name: 'scratch', plugin_id: 'dhv-mkdir' })),
    );
    expect(created).toMatchObject({
      Created: true,
      Volume: { Name: 'scratch', PluginID: 'dhv-mkdir', State: 'ready' },
    });
    const id: string = created.Volume.ID;

    const node = await agent.json('node', 'status');
    expect(node.HostVolumes).toEqual({
      'cloud-img': { Name: 'cloud-img', ID: '', Path: join(agent.dir, 'cloud-img'), ReadOnly: true },
      scratch: { Name: 'scratch', ID: id, Path: join(agent.volumesDir, id), ReadOnly: false },
    });
    expect(node.Attributes).toMatchObject({
      'plugins.host_volume.mkdir.version': '0.0.1',
      'plugins.host_volume.dhv-mkdir.version': '0.1.0',
    });
    expect(node).toMatchObject({ ID: created.Volume.NodeID, NodePool: 'default' });

    const list = await agent.dhv('volume', 'status');
    expect(list.stdout.split('\n').slice(0, 2)).toEqual([
      expect.stringMatching(/^Dynamic Host Volumes$/),
      expect.stringMatching(/^ID\s+Name\s+Namespace\s+Plugin ID\s+Node ID\s+Node Pool\s+State$/),
    ]);
    expect(list.stdout).toMatch(
      new RegExp(
        `^${id.slice(0, 8)}\\s+scratch\\s+default\\s+dhv-mkdir\\s+${created.Volume.NodeID.slice(0, 8)}\\s+default\\s+ready$`,
        'm',
      ),
    );

    const detail = await agent.dhv('volume', 'status', id.slice(0, 6));
    expect(detail.stdout).toContain(`ID        = ${id}`);
    expect(detail.stdout).toMatch(/Capabilities\nAccess Mode\s+Attachment Mode\nsingle-node-writer\s+file-system/);
  });

  it('deletes a volume by ID prefix, running the plugin, and forgets it', async ({ agent }) => {
    await installMkdirPlugin(agent);
    const { Volume } = await agent.json(
      'volume',
      'create',
      await agent.file('a.hcl', volumeHcl({ name: 'gone', plugin_id: 'dhv-mkdir' })),
    );
    const run = await agent.dhv('volume', 'delete', Volume.ID.slice(0, 8));
    expect(run.stdout.trim()).toBe(`Successfully deleted volume "${Volume.ID}"!`);
    expect(existsSync(Volume.HostPath)).toBe(false);
    expect(await agent.json('volume', 'status')).toEqual([]);
    expect((await agent.json('node', 'status')).HostVolumes.gone).toBeUndefined();
  });

  it('refuses a second volume with the same name on the node, in text and in --json', async ({ agent }) => {
    const spec = await agent.file('dup.hcl', volumeHcl({ name: 'dup', plugin_id: 'mkdir' }));
    const first = await agent.json('volume', 'create', spec);
    const second = await agent.dhv('volume', 'create', spec);
    expect(second.exitCode).toBe(1);
    expect(second.stdout).toBe('');
    // The servers pass over a node that already reports the name (Nomad's placement).
    expect(second.stderr).toMatch(
      /^Error: could not place volume "dup": no node meets constraints: 1 nodes had existing volume, 0 nodes filtered by node pool governance, 0 nodes were infeasible\n.*already reports a host volume named "dup"/,
    );
    const asJson = await agent.dhv('volume', 'create', spec, '--json');
    expect(JSON.parse(asJson.stderr)).toMatchObject({ error: { code: 'PLACEMENT_FAILED', volumeId: first.Volume.ID } });
    // That a delete frees the name is a rule, tested in process: src/agent/agent-rules.test.ts.
  });

  it('updates a volume given its id: create runs again with the larger capacity, and shrinking or moving it is refused', async ({
    agent,
  }) => {
    await agent.plugin('sized', bashPlugin());
    const created = await agent.json(
      'volume',
      'create',
      await agent.file(
        'v1.hcl',
        volumeHcl({ name: 'grow', plugin_id: 'sized', capacity_min: '10MiB', capacity_max: '1GiB' }),
      ),
    );
    expect(created.Volume.CapacityBytes).toBe(10 * 2 ** 20);
    const id: string = created.Volume.ID;
    const grow = await agent.dhv(
      'volume',
      'create',
      await agent.file(
        'v2.hcl',
        volumeHcl({ id, name: 'grow', plugin_id: 'sized', capacity_min: '20MiB', capacity_max: '1GiB' }),
      ),
    );
    expect(grow.stdout).toContain(`==> Created host volume grow with ID ${id}`); // Nomad's CLI says Created for an update too
    expect((await agent.dhv('volume', 'status', id)).stdout).toContain('Capacity  = 20 MiB');
    expect((await agent.json('volume', 'status', id)).CreateTime).toBe(created.Volume.CreateTime);

    const refused = await agent.dhv(
      'volume',
      'create',
      await agent.file(
        'v3.hcl',
        volumeHcl({
          id,
          name: 'grow',
          plugin_id: 'sized',
          capacity_max: '15MiB',
          node_id: '00000000-0000-0000-0000-000000000000',
        }),
      ),
    );
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toContain(
      `validating volume "${id}" update failed: 2 errors occurred:\n\t* node ID cannot be updated\n\t* capacity_max (15728640) cannot be less than existing provisioned capacity (20971520)\n`,
    );
    // The rules one by one (a single problem, an unknown id) are tested in process: src/agent/agent-rules.test.ts.
  });

  it('registers an existing path without running any plugin, and refuses a path that does not exist', async ({
    agent,
  }) => {
    const existing = join(agent.dir, 'existing');
    await mkdir(existing);
    await writeFile(join(existing, 'keep.txt'), 'keep');
    const spec = await agent.file('reg.hcl', volumeHcl({ name: 'legacy', host_path: existing, capacity: '1GiB' }));
    const run = await agent.dhv('volume', 'register', spec);
    expect(run.stdout).toMatch(/^Registered host volume legacy with ID [0-9a-f-]{36}\n$/);
    const detail = await agent.dhv('volume', 'status', /ID ([0-9a-f-]{36})/.exec(run.stdout)![1]!);
    expect(detail.stdout).toContain('Plugin ID = <none>');
    expect(detail.stdout).toContain('Capacity  = 1.0 GiB');
    const node = await agent.json('node', 'status');
    expect(node.HostVolumes.legacy).toMatchObject({ Path: existing, ReadOnly: false });
    const id = node.HostVolumes.legacy.ID;
    expect((await agent.dhv('volume', 'delete', id)).exitCode).toBe(0);
    expect(await readFile(join(existing, 'keep.txt'), 'utf8')).toBe('keep'); // delete of a registered volume never touches it

    const missing = await agent.dhv(
      'volume',
      'register',
      await agent.file('missing.hcl', volumeHcl({ name: 'nope', host_path: join(agent.dir, 'nowhere') })),
    );
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr).toContain(
      `could not verify host path for "nope": stat ${join(agent.dir, 'nowhere')}: no such file or directory`,
    );
  });

  it('reports every problem of a bad spec at once, and reads a spec from stdin', async ({ agent }) => {
    // Nomad's CLI stops at the first stage that fails (type, then decoding); its servers list every rule broken.
    const csi = await agent.dhv('volume', 'create', await agent.file('csi.hcl', 'type = "csi"\nname = "c"\n'));
    expect(csi.exitCode).toBe(1);
    expect(csi.stderr).toMatch(/unknown volume type: csi/);
    const unit = await agent.dhv(
      'volume',
      'create',
      await agent.file('unit.hcl', 'type = "host"\nname = "u"\ncapacity_min = "10 parsecs"\n'),
    );
    expect(unit.exitCode).toBe(1);
    expect(unit.stderr).toMatch(
      /Error decoding the volume definition: invalid capacity_min: could not parse value as bytes: unhandled size name: parsecs/,
    );
    const bad = await agent.dhv(
      'volume',
      'create',
      await agent.file('bad.hcl', 'type = "host"\ncapacity_min = "2GB"\ncapacity_max = "1GB"\n'),
    );
    expect(bad.exitCode).toBe(1);
    expect(bad.stderr).toMatch(
      /^Error: volume validation failed: 2 errors occurred:\n\t\* missing name\n\t\* capacity_max \(1000000000\) must be larger than capacity_min \(2000000000\)/,
    );

    const child = agent.start('volume', 'create', '-', '--json');
    child.stdin!.end(
      JSON.stringify({ type: 'host', name: 'piped', plugin_id: 'mkdir', capacity_min: '1GB', capacity_max: '1GB' }),
    );
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    await new Promise((r) => child.once('close', r));
    expect(JSON.parse(out).Volume).toMatchObject({ Name: 'piped', RequestedCapacityMinBytes: 1_000_000_000 });
  });

  it('names the plugin, its exit and its stderr when create fails, and leaves the name free', async ({ agent }) => {
    await agent.plugin(
      'broken',
      '#!/bin/bash\n[ "$1" = fingerprint ] && { echo \'{"version": "1"}\'; exit 0; }\necho "disk on fire" >&2\necho \'{"error": "no space left"}\'\nexit 3\n',
    );
    const run = await agent.dhv(
      'volume',
      'create',
      await agent.file('b.hcl', volumeHcl({ name: 'b', plugin_id: 'broken' })),
    );
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toMatch(
      /error creating volume "[0-9a-f-]{36}" with plugin "broken": exit status 3: no space left/,
    );
    expect(run.stderr).toContain('disk on fire');
    expect(await agent.json('volume', 'status')).toEqual([]);
    expect(
      (await agent.json('volume', 'create', await agent.file('ok.hcl', volumeHcl({ name: 'b', plugin_id: 'mkdir' }))))
        .Created,
    ).toBe(true);
  });
});

describe.concurrent('dhv plugin run', () => {
  it('runs create exactly as an agent would, with every request field from flags', async ({ agent }) => {
    await agent.plugin(
      'echo-env',
      '#!/bin/bash\n/usr/bin/env >&2\n/bin/mkdir -p "$DHV_VOLUMES_DIR/$DHV_VOLUME_ID"\necho "{\\"path\\": \\"$DHV_VOLUMES_DIR/$DHV_VOLUME_ID\\", \\"BYTES\\": 5}"\n',
    );
    const out = await agent.json(
      'plugin',
      'run',
      'echo-env',
      'create',
      '--volume-id',
      '1e1d4540-14f9-2515-8502-24d46291717d',
      '--name',
      'test',
      '--namespace',
      'prod',
      '--capacity-min',
      '50MB',
      '--capacity-max',
      '1GiB',
      '--param',
      'b=<&>',
      '--param',
      'a=1',
      '--node-id',
      'n1',
      '--node-pool',
      'gpu',
    );
    expect(out.environment).toEqual({
      DHV_OPERATION: 'create',
      DHV_VOLUMES_DIR: agent.volumesDir,
      DHV_PLUGIN_DIR: agent.pluginDir,
      DHV_NAMESPACE: 'prod',
      DHV_VOLUME_NAME: 'test',
      DHV_VOLUME_ID: '1e1d4540-14f9-2515-8502-24d46291717d',
      DHV_NODE_ID: 'n1',
      DHV_NODE_POOL: 'gpu',
      DHV_CAPACITY_MIN_BYTES: '50000000',
      DHV_CAPACITY_MAX_BYTES: '1073741824',
      DHV_PARAMETERS: '{"a":"1","b":"\\u003c\\u0026\\u003e"}',
    });
    expect(out.result).toEqual({ path: `${agent.volumesDir}/1e1d4540-14f9-2515-8502-24d46291717d`, bytes: 5 });
    expect(out.stderr).not.toMatch(/^PATH=/m); // the environment is replaced, not extended
  });

  it("prints the SDK's typed error with the plugin's stdout and stderr, and exits 1", async ({ agent }) => {
    const plugin = await agent.plugin('slow', '#!/bin/bash\necho "about to hang" >&2\n/bin/sleep 5\n');
    // Long enough for bash to have started and written to stderr even on a loaded machine.
    const run = await agent.dhv('plugin', 'run', plugin, 'fingerprint', '--json', '--timeout', '1500ms');
    expect(run.exitCode).toBe(1);
    expect(JSON.parse(run.stderr).error).toMatchObject({
      code: 'PLUGIN_TIMED_OUT',
      stderr: 'about to hang\n',
      signal: 'SIGKILL',
    });
    const human = await agent.dhv('plugin', 'run', plugin, 'fingerprint', '--timeout', '1.5s');
    expect(human.stderr).toMatch(
      /^Error: error fingerprinting plugin "slow": signal: killed\n.*past its 1500ms deadline[\s\S]*code: PLUGIN_TIMED_OUT[\s\S]*stderr:\n {4}about to hang/,
    );
  });

  it('runs the built-in mkdir by its ID, and refuses a bad flag with what to do', async ({ agent }) => {
    const out = await agent.json(
      'plugin',
      'run',
      'mkdir',
      'create',
      '--volume-id',
      '2b2b2b2b-14f9-2515-8502-24d46291717d',
    );
    expect(out).toMatchObject({
      builtin: true,
      result: { path: `${agent.volumesDir}/2b2b2b2b-14f9-2515-8502-24d46291717d`, bytes: 0 },
    });
    const bad = await agent.dhv('plugin', 'run', 'mkdir', 'create', '--param', 'novalue');
    // A usage error, as from every command (see the exit codes in packages/harness/README.md).
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toMatch(/--param "novalue": expected key=value/);
  });
});
