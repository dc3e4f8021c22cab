import { describe, expect } from 'vitest';
import { testWithAgent, volumeHcl, type TempAgent } from './support/dhv-agent.js';
import { runDhv } from './support/kit.js';

/** Each test has an agent of its own, so they run side by side. */
const it = testWithAgent();

async function create(agent: TempAgent, name: string, extra = '', ...flags: string[]) {
  return agent.json(
    'volume',
    'create',
    ...flags,
    await agent.file(`${name}.hcl`, volumeHcl({ name, plugin_id: 'mkdir' }, extra)),
  );
}

describe.concurrent("Nomad's flags and lookups on volumes", () => {
  it('finds a volume by name or name prefix in status and delete, and shows the table for an ambiguous prefix', async ({
    agent,
  }) => {
    const data = (await create(agent, 'data')).Volume;
    const database = (await create(agent, 'database')).Volume;

    expect((await agent.json('volume', 'status', 'data')).ID).toBe(data.ID); // exact name beats the prefix
    expect((await agent.json('volume', 'status', 'datab')).ID).toBe(database.ID);
    const ambiguous = await agent.dhv('volume', 'status', 'da');
    expect(ambiguous.exitCode).toBe(1);
    expect(ambiguous.stderr).toContain('Error: Prefix matched multiple host volumes\n\nID ');
    for (const v of [data, database])
      expect(ambiguous.stderr).toMatch(new RegExp(`\\n${v.ID.slice(0, 8)}\\s+${v.Name}\\s+default\\s+mkdir`));
    const json = await agent.dhv('volume', 'delete', 'da', '--json');
    expect(JSON.parse(json.stderr).error).toMatchObject({
      code: 'VOLUME_ID_AMBIGUOUS',
      matches: [data.ID, database.ID].sort(),
    });
    expect(json.stderr).toContain('Prefix matched multiple volumes');

    const deleted = await agent.dhv('volume', 'delete', 'database');
    expect(deleted.stdout).toBe(`Successfully deleted volume "${database.ID}"!\n`);
    const missing = await agent.dhv('volume', 'delete', 'database');
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr).toContain(
      'Could not find existing host volume to delete: no volumes with prefix or ID "database" found',
    );
  });

  it('-id updates the volume it names by ID prefix or name, as id = in the spec does', async ({ agent }) => {
    const first = (await create(agent, 'grow')).Volume;
    const spec = await agent.file(
      'grow2.hcl',
      volumeHcl({ name: 'grow', plugin_id: 'mkdir' }, 'capacity_min = "1MiB"\ncapacity_max = "2MiB"'),
    );
    const updated = await agent.json('volume', 'create', '-id', first.ID.slice(0, 6), spec);
    expect(updated).toMatchObject({ Created: false, Volume: { ID: first.ID, RequestedCapacityMinBytes: 1048576 } });
    const byName = await agent.json('volume', 'create', '-id=grow', spec);
    expect(byName.Volume.ID).toBe(first.ID);
    const none = await agent.dhv('volume', 'create', '-id', 'nothing', spec);
    expect(none.exitCode).toBe(1);
    expect(none.stderr).toContain('Could not update existing volume: no volumes with prefix or ID "nothing" found');

    const registered = await agent.json(
      'volume',
      'register',
      await agent.file('r.hcl', volumeHcl({ name: 'reg', host_path: agent.dir })),
    );
    const again = await agent.json(
      'volume',
      'register',
      '-id',
      'reg',
      await agent.file('r2.hcl', volumeHcl({ name: 'reg', host_path: agent.dir }, 'capacity = "2MiB"')),
    );
    expect(again).toMatchObject({ Created: false, Volume: { ID: registered.Volume.ID, CapacityBytes: 2097152 } });
    const detach = await agent.dhv(
      'volume',
      'register',
      '-detach',
      await agent.file('r3.hcl', volumeHcl({ name: 'x', host_path: agent.dir })),
    );
    expect(detach.exitCode).toBe(2);
    expect(detach.stderr).toContain('flag provided but not defined: -detach');
  });

  it('-namespace and NOMAD_NAMESPACE choose the namespace of a new volume, of lookups and of the list', async ({
    agent,
  }) => {
    const missing = await agent.dhv(
      'volume',
      'create',
      '-namespace',
      'prod',
      await agent.file('l.hcl', volumeHcl({ name: 'logs', plugin_id: 'mkdir' })),
    );
    expect(missing.stderr).toMatch(/^Error: volume validation failed: no such namespace "prod"\n/);
    expect((await agent.dhv('namespace', 'apply', 'prod')).exitCode).toBe(0);
    const prod = (await create(agent, 'logs', '', '-namespace', 'prod')).Volume;
    expect(prod.Namespace).toBe('prod');
    const dflt = (await create(agent, 'logs-default')).Volume;
    const names = async (...flags: string[]) =>
      (await agent.json('volume', 'status', ...flags)).map((v: { Name: string }) => v.Name).sort();
    expect(await names()).toEqual(['logs-default']);
    expect(await names('-namespace', 'prod')).toEqual(['logs']);
    expect(await names('-namespace', '*')).toEqual(['logs', 'logs-default']);
    expect((await agent.dhv('volume', 'status', 'logs')).stdout).toContain(`ID        = ${dflt.ID}`);

    const fromEnv = await runDhv(['volume', 'status', 'logs', '--json', '--data-dir', agent.dataDir], {
      env: { NOMAD_NAMESPACE: 'prod', DHV_DATA_DIR: undefined },
    });
    expect(JSON.parse(fromEnv.stdout).ID).toBe(prod.ID);
    const wrong = await agent.dhv('volume', 'delete', prod.ID);
    expect(wrong.exitCode).toBe(1);
    // As Nomad's servers: a whole ID names the volume of the request's namespace or none.
    expect(wrong.stderr).toContain(`no such volume: ${prod.ID}`);
    expect((await agent.dhv('volume', 'delete', '-namespace', 'prod', prod.ID)).exitCode).toBe(0);
  });

  it('-policy-override and -force say what they did, and Volume Warnings print as Nomad prints them', async ({
    agent,
  }) => {
    const spec = await agent.file('w.json', JSON.stringify({ type: 'host', name: 'tab\there', plugin_id: 'mkdir' }));
    const run = await agent.dhv('volume', 'create', '-policy-override', '-detach', spec);
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toMatch(
      /^Volume Warnings:\nthe volume name "tab\\there" holds control characters[^\n]*\n\nCreated host volume tab\\there with ID /,
    );
    expect(run.stderr).toContain(
      'warning: -policy-override overrides soft-mandatory Sentinel policies; the simulated agent has none',
    );
    const id = /with ID (\S+)/.exec(run.stdout)![1]!;
    const deleted = await agent.dhv('volume', 'delete', '-force', id);
    expect(deleted.exitCode).toBe(0);
    expect(deleted.stderr).toContain("warning: -force only matters when the volume's node is gone");
  });

  it('volume JSON carries Nomad-shaped times, and the list carries stubs', async ({ agent }) => {
    const before = BigInt(Date.now()) * 1_000_000n;
    const { Volume } = await create(agent, 't');
    expect(typeof Volume.CreateTime).toBe('number');
    expect(BigInt(Volume.CreateTime)).toBeGreaterThanOrEqual(before - 1_000_000_000n);
    const [stub] = await agent.json('volume', 'status');
    expect(Object.keys(stub).sort()).toEqual(
      [
        'CapacityBytes',
        'CreateTime',
        'ID',
        'ModifyTime',
        'Name',
        'Namespace',
        'NodeID',
        'NodePool',
        'PluginID',
        'State',
      ].sort(),
    );
  });
});

describe('a node with facts', () => {
  const it = testWithAgent({
    config: () =>
      'name = "web-1"\ndatacenter = "eu-west"\ndatacentre = "typo"\nclient {\n  node_class = "storage"\n  meta {\n    rack = "r7"\n  }\n}\n',
  });
  it("publishes the config's name, datacenter, class and meta and the host's attributes, and places constraints on them", async ({
    agent,
  }) => {
    const node = await agent.json('node', 'status', '-self');
    expect(node).toMatchObject({
      Name: 'web-1',
      Datacenter: 'eu-west',
      NodeClass: 'storage',
      Meta: { rack: 'r7' },
      Drivers: {},
    });
    expect(node.Attributes).toMatchObject({ 'kernel.name': 'linux', 'plugins.host_volume.mkdir.version': '0.0.1' });
    expect(Object.keys(node.Attributes)).toEqual(
      expect.arrayContaining(['os.name', 'cpu.arch', 'unique.hostname', 'nomad.version']),
    );

    const human = await agent.dhv('node', 'status');
    expect(human.stdout).toMatch(/^ID +=.*\nName +=.*web-1\nNode Pool += default\nClass += storage\nDC += eu-west\n/);
    expect(human.stderr).toContain(
      'unexpected keys datacentre: a real Nomad agent refuses to start with this config; dhv ignores the key (did you mean datacenter?)',
    );
    expect((await agent.dhv('node', 'status', '-verbose')).stdout).toMatch(
      /\nAttributes\n[\s\S]*kernel\.name += linux[\s\S]*\nMeta\nrack = r7/,
    );
    expect((await agent.dhv('node', 'status', '-short')).stdout).not.toContain('Host Volumes\n');
    expect((await agent.dhv('node', 'status', '-t', '{{.Name}}/{{.NodeClass}}')).stdout).toBe('web-1/storage\n');

    const constrained = (attribute: string, value: string) =>
      `constraint {\n  attribute = ${JSON.stringify(attribute)}\n  value = ${JSON.stringify(value)}\n}`;
    const placed = await create(
      agent,
      'placed',
      [
        constrained('${attr.kernel.name}', 'linux'),
        constrained('${meta.rack}', 'r7'),
        constrained('${node.class}', 'storage'),
        constrained('${node.datacenter}', 'eu-west'),
        constrained('${node.unique.name}', 'web-1'),
        constrained('${node.pool}', 'default'),
      ].join('\n'),
    );
    expect(placed.Volume.State).toBe('ready');
    const refused = await agent.dhv(
      'volume',
      'create',
      await agent.file('no.hcl', volumeHcl({ name: 'no', plugin_id: 'mkdir' }, constrained('${meta.rack}', 'r8'))),
    );
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toContain(
      'Constraint ${meta.rack} = "r8" is not met by this node (here ${meta.rack} is "r7").',
    );
  });
});
