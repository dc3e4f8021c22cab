import { describe, expect, it } from 'vitest';
import { buildEnvironment } from './environment.js';
import { ENV, REQUEST_FIELDS } from '../protocol/variables.js';

const VOLUME_ID = '5b8a2a5e-8f0a-4c8e-9a4f-0c7d3f2b1a99';
const base = { volumesDir: '/srv/volumes', volumeName: 'data', volumeId: VOLUME_ID, nodeId: 'node-1' };

describe('buildEnvironment builds exactly what a Nomad agent gives a plugin', () => {
  it('gives fingerprint DHV_OPERATION and nothing else', () => {
    expect(buildEnvironment('fingerprint', {}, '/opt/plugins/p')).toEqual({ [ENV.operation]: 'fingerprint' });
  });

  it('gives create and delete their own variables, defaulted as the agent defaults them', () => {
    const create = buildEnvironment('create', base, '/opt/plugins/p');
    expect(Object.keys(create).sort()).toEqual([ENV.operation, ...REQUEST_FIELDS.create.map((f) => ENV[f])].sort());
    expect(create).toMatchObject({
      [ENV.pluginDir]: '/opt/plugins',
      [ENV.namespace]: 'default',
      [ENV.nodePool]: 'default',
      [ENV.capacityMinBytes]: '0',
      [ENV.capacityMaxBytes]: '0',
      [ENV.parameters]: 'null',
    });
    const del = buildEnvironment('delete', base, '/opt/plugins/p');
    expect(Object.keys(del).sort()).toEqual(
      [ENV.operation, ...REQUEST_FIELDS.delete].map((f) => (f in ENV ? ENV[f as keyof typeof ENV] : f)).sort(),
    );
    expect(del[ENV.createdPath]).toBe('');
  });

  it('writes capacities as decimal integers, exact beyond 2^53', () => {
    const env = buildEnvironment('create', { ...base, capacityMinBytes: 2n ** 62n, capacityMaxBytes: 1024 }, '/p/x');
    expect(env[ENV.capacityMinBytes]).toBe('4611686018427387904');
    expect(env[ENV.capacityMaxBytes]).toBe('1024');
  });

  it('refuses a capacity number that is not a safe integer', () => {
    expect(() => buildEnvironment('create', { ...base, capacityMinBytes: 2 ** 60 }, '/p/x')).toThrow(/use a bigint/);
    expect(() => buildEnvironment('create', { ...base, capacityMinBytes: 1.5 }, '/p/x')).toThrow(TypeError);
  });

  it('marshals parameters as Go marshals a map[string]string', () => {
    const env = buildEnvironment('create', { ...base, parameters: { z: '1', a: '<&>' } }, '/p/x');
    expect(env[ENV.parameters]).toBe('{"a":"\\u003c\\u0026\\u003e","z":"1"}');
  });

  it('says which field is missing', () => {
    expect(() => buildEnvironment('create', { ...base, volumeId: undefined } as never, '/p/x')).toThrow(
      `request.volumeId is required (it becomes ${ENV.volumeId})`,
    );
  });
});
