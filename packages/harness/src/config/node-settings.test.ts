import { describe, expect, it } from 'vitest';
import { parseClientConfig } from './agent-config.js';
import { nearest } from './node-settings.js';

describe("the node's settings in the agent config", () => {
  it('reads name, datacenter, client.node_class and client.meta as Nomad lays them out', () => {
    const config = parseClientConfig({
      name: 'web-1',
      datacenter: 'eu-west',
      client: [{ node_class: 'storage', node_pool: 'gpu', meta: [{ rack: 'r7', slots: 4 }] }],
    });
    expect(config.node).toEqual({
      name: 'web-1',
      datacenter: 'eu-west',
      nodeClass: 'storage',
      meta: { rack: 'r7', slots: '4' },
    });
    expect(config.nodePool).toBe('gpu');
    expect(config.warnings).toEqual([]);
  });

  it('warns about keys Nomad would not know, in its words, with the nearest known key', () => {
    const config = parseClientConfig({ datacentre: 'x', client: { node_clas: 'a', zzz: 1 } });
    expect(config.warnings).toEqual([
      'unexpected keys datacentre: a real Nomad agent refuses to start with this config; dhv ignores the key (did you mean datacenter?)',
      'client unexpected keys node_clas: a real Nomad agent refuses to start with this config; dhv ignores the key (did you mean client.node_class?)',
      'client unexpected keys zzz: a real Nomad agent refuses to start with this config; dhv ignores the key',
    ]);
    expect(nearest('plugin_dirr', ['plugin_dir', 'data_dir'])).toBe('plugin_dir');
  });

  it('refuses a meta that is not a block of strings', () => {
    expect(() => parseClientConfig({ client: { meta: 'rack=r1' } })).toThrow(/client\.meta must be a block of strings/);
  });
});
