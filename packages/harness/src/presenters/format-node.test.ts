import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { NodeStatus } from '../agent/agent.js';
import { builtinFirst, fingerprintPlugins, type Fingerprint } from '../agent/plugins.js';
import { fingerprintText, nodeDetail } from './format-node.js';
import { removeTempDir, tempDir } from '../../../../test/support/kit.js';

let dir = '';
afterEach(async () => {
  if (dir) await removeTempDir(dir);
  dir = '';
});

const status: NodeStatus = {
  node: {
    ID: '0b62d807-6101-a80f-374d-e1c430abbf47',
    Name: 'web-1',
    Datacenter: 'eu-west',
    NodeClass: '',
    NodePool: 'default',
    Status: 'ready',
    SchedulingEligibility: 'eligible',
    Drain: false,
    Attributes: { 'kernel.name': 'linux', 'plugins.host_volume.mkdir.version': '0.0.1' },
    Meta: { rack: 'r7' },
    Drivers: {},
    HostVolumes: {
      data: { Name: 'data', Path: '/v/e3b0c442', ReadOnly: false, ID: 'e3b0c442-98fc-1c14-9afb-f4c8996fb924' },
    },
  },
  skippedPlugins: [],
  volumes: [],
  warnings: [],
};

describe('node status, as nomad node status -self prints it', () => {
  it("starts with Nomad's block, an empty class as <none>, then the host volumes", () => {
    expect(nodeDetail(status)).toBe(
      [
        'ID            = 0b62d807-6101-a80f-374d-e1c430abbf47',
        'Name          = web-1',
        'Node Pool     = default',
        'Class         = <none>',
        'DC            = eu-west',
        'Drain         = false',
        'Eligibility   = eligible',
        'Status        = ready',
        'Host Volumes  = data',
        'Driver Status = <none>',
        '',
        'Host Volumes',
        'Name  ReadOnly  ID        Source',
        'data  false     e3b0c442  /v/e3b0c442',
      ].join('\n'),
    );
  });

  it('-short is the block alone; -verbose adds Drivers, Attributes and Meta with full IDs', () => {
    expect(nodeDetail(status, { short: true })).toMatch(/Host Volumes = data\nDrivers += <none>$/);
    const verbose = nodeDetail(status, { verbose: true });
    expect(verbose).not.toContain('Host Volumes  =');
    expect(verbose).toContain('e3b0c442-98fc-1c14-9afb-f4c8996fb924');
    expect(verbose).toMatch(
      /\n\nAttributes\nkernel\.name += linux\nplugins\.host_volume\.mkdir\.version = 0\.0\.1\n\nMeta\nrack = r7$/,
    );
  });
});

describe('node status with what the fingerprint skipped, and host volumes', () => {
  it('lists skipped plugins with their reasons, static volumes as <static>, and no table when there are no volumes', () => {
    const withSkipped: NodeStatus = {
      ...status,
      node: {
        ...status.node,
        HostVolumes: {
          ...status.node.HostVolumes,
          'a\tb': { Name: 'a\tb', Path: '/srv/static', ReadOnly: true, ID: '' },
        },
      },
      skippedPlugins: [
        { id: 'broken', executable: '/p/broken', reason: 'error fingerprinting plugin "broken": exit status 1' },
      ],
    };
    expect(nodeDetail(withSkipped).split('\n\n').slice(1)).toEqual([
      [
        'Host Volumes',
        'Name  ReadOnly  ID        Source',
        'a\\tb  true      <static>  /srv/static',
        'data  false     e3b0c442  /v/e3b0c442',
      ].join('\n'),
      ['Skipped Plugins', 'ID      Reason', 'broken  error fingerprinting plugin "broken": exit status 1'].join('\n'),
    ]);
    const none = nodeDetail({ ...status, node: { ...status.node, HostVolumes: {} } });
    expect(none).toContain('Host Volumes  = <none>\n');
    expect(none.endsWith('\n\nHost Volumes\nNo host volumes')).toBe(true);
  });
});

describe('agent fingerprint, as dhv agent fingerprint prints it', () => {
  /** A plugin dir: a plugin that answers, one that fails, one whose fingerprint has no version, and a data file. */
  async function pluginDir(): Promise<string> {
    dir = await tempDir('fingerprint-text');
    const plugins = join(dir, 'plugins');
    await mkdir(plugins, { mode: 0o755 });
    const files: Record<string, string> = {
      good: '#!/bin/sh\necho \'{"version": "1.2.0"}\'\necho "warming up" >&2\n',
      broken: '#!/bin/sh\necho "no version here" >&2\nexit 1\n',
      crasher: "#!/bin/sh\necho '{}'\n",
    };
    for (const [name, text] of Object.entries(files)) {
      await writeFile(join(plugins, name), text);
      await chmod(join(plugins, name), 0o755);
    }
    await writeFile(join(plugins, 'notes.txt'), 'not a plugin');
    return plugins;
  }

  it("shows the plugins, the node attributes, what was skipped, the agent's log lines, stderr, and where Nomad would crash", async () => {
    const plugins = await pluginDir();
    const text = fingerprintText(await fingerprintPlugins(builtinFirst(), plugins));
    const panic = 'runtime error: invalid memory address or nil pointer dereference';
    const crash = `plugin "crasher" fingerprinted without a version: a real Nomad agent crashes here (panic: ${panic})`;
    expect(text.split('\n\n')).toEqual([
      ['Plugins', 'ID     Version  Executable', 'mkdir  0.0.1    (built-in)', `good   1.2.0    ${plugins}/good`].join(
        '\n',
      ),
      ['Attributes', 'plugins.host_volume.good.version  = 1.2.0', 'plugins.host_volume.mkdir.version = 0.0.1'].join(
        '\n',
      ),
      [
        'Skipped Plugins',
        'ID       Reason',
        'broken   error fingerprinting plugin "broken": exit status 1',
        `crasher  ${crash}`,
        '         dhv skips the plugin instead; print {"version": "0.0.1"} (any version go-version parses)',
        `         plugin crasher's stdout was "{}\\n"`,
      ].join('\n'),
      [
        'Agent Log',
        '  [ERROR] error running plugin: plugin_id=broken error="exit status 1"',
        `  [ERROR] error parsing plugin output: plugin_id=crasher error=${JSON.stringify(crash)}`,
      ].join('\n'),
      ['Plugin stderr', '  good:', '    warming up', '  broken:', '    no version here'].join('\n'),
      [
        'Nomad Crash',
        `  a real Nomad agent panics fingerprinting crasher (panic: ${panic}) and publishes nothing; dhv skipped that plugin`,
      ].join('\n'),
    ]);
  });

  it('logs a plugin dir that does not exist as the agent does, and shows the built-in alone', async () => {
    dir = await tempDir('fingerprint-text');
    const missing = join(dir, 'none');
    expect(fingerprintText(await fingerprintPlugins(builtinFirst(), missing))).toBe(
      [
        'Plugins',
        'ID     Version  Executable',
        'mkdir  0.0.1    (built-in)',
        '',
        'Attributes',
        'plugins.host_volume.mkdir.version = 0.0.1',
        '',
        'Agent Log',
        `  [DEBUG] plugin dir does not exist: dir=${JSON.stringify(missing)}`,
      ].join('\n'),
    );
  });

  it("ends with each plugin's warnings, named by plugin", () => {
    const fingerprint: Fingerprint = {
      plugins: [
        {
          id: 'sock',
          version: '1.0.0',
          builtin: false,
          executable: '/p/sock',
          warnings: ['its stdout was a socket, not a pipe'],
        },
      ],
      skipped: [],
      attributes: { 'plugins.host_volume.sock.version': '1.0.0' },
    };
    expect(fingerprintText(fingerprint).split('\n\n').at(-1)).toBe(
      'Warnings\n  sock: its stdout was a socket, not a pipe',
    );
  });
});
