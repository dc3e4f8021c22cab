import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadAgentConfig } from './agent-config.js';
import { removeTempDir, tempDir } from '../../../../test/support/kit.js';

let dir: string | undefined;
afterEach(async () => {
  if (dir) await removeTempDir(dir);
  dir = undefined;
});

describe('agent configuration', () => {
  it("defaults like Nomad's: <data_dir>/host_volume_plugins, <data_dir>/host_volumes, pool default, data dir ./.dhv", async () => {
    const config = await loadAgentConfig({ cwd: '/srv', env: {} });
    expect(config).toMatchObject({
      dataDir: '/srv/.dhv',
      pluginDir: '/srv/.dhv/host_volume_plugins',
      volumesDir: '/srv/.dhv/host_volumes',
      nodePool: 'default',
      hostVolumes: [],
    });
  });

  it('takes the data dir from $DHV_DATA_DIR when no flag names one', async () => {
    expect((await loadAgentConfig({ cwd: '/srv', env: { DHV_DATA_DIR: 'state' } })).dataDir).toBe('/srv/state');
  });

  it('takes data_dir from --config over $DHV_DATA_DIR, and refuses the two naming different dirs', async () => {
    dir = await tempDir('config');
    const file = join(dir, 'agent.hcl');
    await writeFile(file, `data_dir = "${join(dir, 'prod-data')}"\n`);
    expect((await loadAgentConfig({ config: file, env: {} })).dataDir).toBe(join(dir, 'prod-data'));
    expect((await loadAgentConfig({ config: file, env: { DHV_DATA_DIR: join(dir, 'prod-data') } })).dataDir).toBe(
      join(dir, 'prod-data'),
    );
    await expect(loadAgentConfig({ config: file, env: { DHV_DATA_DIR: join(dir, 'other') } })).rejects.toThrow(
      `data_dir = "${join(dir, 'prod-data')}" in ${file} and DHV_DATA_DIR=${join(dir, 'other')} name different data dirs`,
    );
    expect(
      (await loadAgentConfig({ config: file, dataDir: join(dir, 'flag'), env: { DHV_DATA_DIR: join(dir, 'other') } }))
        .dataDir,
    ).toBe(join(dir, 'flag'));
  });

  it('reads a Nomad client block in HCL, with static host volumes, and lets flags override it', async () => {
    dir = await tempDir('config');
    const file = join(dir, 'agent.hcl');
    await writeFile(
      file,
      `client {\n  host_volume_plugin_dir = "/opt/plugins"\n  host_volumes_dir = "vols"\n  node_pool = "gpu"\n  host_volume "cloud-img" {\n    path = "/opt/nomad/cloud-img"\n    read_only = true\n  }\n}\n`,
    );
    const config = await loadAgentConfig({ config: file, cwd: dir, env: {}, nodePool: 'edge' });
    expect(config).toMatchObject({
      pluginDir: '/opt/plugins',
      volumesDir: join(dir, 'vols'),
      nodePool: 'edge',
      hostVolumes: [{ name: 'cloud-img', path: '/opt/nomad/cloud-img', readOnly: true }],
    });
  });

  it("reads the exec driver's allow_caps (a hardened client), and refuses one that is not a list of names", async () => {
    dir = await tempDir('config');
    const file = join(dir, 'agent.hcl');
    const caps = ['chown', 'fowner', 'kill', 'setgid', 'setuid'];
    await writeFile(file, `plugin "exec" {\n  config {\n    allow_caps = ${JSON.stringify(caps)}\n  }\n}\n`);
    expect((await loadAgentConfig({ config: file, cwd: dir, env: {} })).execAllowCaps).toEqual(caps);
    expect((await loadAgentConfig({ cwd: dir, env: {} })).execAllowCaps).toBeUndefined();
    await writeFile(file, 'plugin "exec" {\n  config {\n    allow_caps = "chown"\n  }\n}\n');
    await expect(loadAgentConfig({ config: file, cwd: dir, env: {} })).rejects.toThrow(
      'plugin "exec".config.allow_caps must be a list of strings, got the string "chown"',
    );
  });

  it('reads the same config as JSON, and reports every bad setting at once', async () => {
    dir = await tempDir('config');
    const good = join(dir, 'agent.json');
    await writeFile(good, JSON.stringify({ client: { host_volume: [{ data: { path: '/data' } }] } }));
    expect((await loadAgentConfig({ config: good, env: {} })).hostVolumes).toEqual([
      { name: 'data', path: '/data', readOnly: false },
    ]);
    const bad = join(dir, 'bad.json');
    await writeFile(bad, JSON.stringify({ client: { node_pool: 3, host_volume: { a: { read_only: 'yes' } } } }));
    await expect(loadAgentConfig({ config: bad, env: {} })).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      details: {
        problems: [
          'client.node_pool must be a non-empty string',
          'client.host_volume "a".path is required',
          'client.host_volume "a".read_only must be true or false',
        ],
      },
    });
  });

  it('refuses a client that is not a block, and a config too large to be one, with a clear error', async () => {
    dir = await tempDir('config');
    const notBlock = join(dir, 'agent.hcl');
    await writeFile(notBlock, 'client = "x"\n');
    await expect(loadAgentConfig({ config: notBlock, env: {} })).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      details: { problems: ['client must be a block (client { ... }), got the string "x"'] },
    });
    const huge = join(dir, 'huge.hcl');
    await writeFile(huge, Buffer.alloc(50 * 1024 * 1024, 0x61));
    await expect(loadAgentConfig({ config: huge, env: {} })).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      message: expect.stringMatching(/is 52428800 bytes: dhv reads at most/),
    });
  });

  it('reads the config with HCL 1, as Nomad does: JSON blocks flattened, quoted keys, the last of a repeated key', async () => {
    dir = await tempDir('config');
    const hcl = join(dir, 'agent.hcl');
    await writeFile(
      hcl,
      'data_dir = "/tmp/a"\ndata_dir = "/var/dhv" # the last wins\nclient {\n  "node_pool" = "gpu"\n  host_volume "scratch" {\n    path = "/srv/s"\n  }\n}\n',
    );
    expect(await loadAgentConfig({ config: hcl, cwd: '/', env: {} })).toMatchObject({
      dataDir: '/var/dhv',
      nodePool: 'gpu',
      hostVolumes: [{ name: 'scratch', path: '/srv/s', readOnly: false }],
    });
    const json = join(dir, 'agent.json');
    await writeFile(json, '{"client": {"host_volume": {"scratch": {"path": "/srv/j", "read_only": true}}},}');
    expect((await loadAgentConfig({ config: json, cwd: '/', env: {} })).hostVolumes).toEqual([
      { name: 'scratch', path: '/srv/j', readOnly: true },
    ]);
  });

  it('refuses a FIFO given as the config at once instead of waiting for a writer', async () => {
    dir = await tempDir('config');
    const fifo = join(dir, 'agent.hcl');
    execFileSync('mkfifo', [fifo]);
    await expect(loadAgentConfig({ config: fifo, cwd: '/', env: {} })).rejects.toThrow(/not a regular file/);
  });
});
