import { describe, expect, it } from 'vitest';
import type { NodeStatus } from '../agent/agent.js';
import { nodeDetail } from './format-node.js';

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
