import { describe, expect, it } from 'vitest';
import { AgentError } from '../errors/agent-error.js';
import { validateVolumeSpec, readVolumeSpec } from './volume-spec.js';
import { Readable } from 'node:stream';

function problems(doc: Record<string, unknown>, purpose: 'create' | 'register' = 'create'): string[] {
  try {
    validateVolumeSpec(doc, purpose);
  } catch (err) {
    expect(err).toBeInstanceOf(AgentError);
    return (err as AgentError).details.problems as string[];
  }
  return [];
}

describe('volume specs, validated like Nomad', () => {
  it('reads human sizes as go-humanize does', () => {
    const spec = validateVolumeSpec({ type: 'host', name: 'a', plugin_id: 'mkdir', capacity_min: '50MB', capacity_max: '100GiB' }, 'create');
    expect(spec.capacityMinBytes).toBe(50_000_000n);
    expect(spec.capacityMaxBytes).toBe(107_374_182_400n);
  });

  it('refuses sizes of 2^63 bytes and more', () => {
    expect(problems({ type: 'host', name: 'a', plugin_id: 'mkdir', capacity_min: '8EiB' })[0]).toMatch(/^capacity_min: .*too large/);
  });

  it('reports every bad field at once, naming each', () => {
    const found = problems({ type: 'csi', id: 'nope', capacity_min: '2GB', capacity_max: '1GB', parameters: { a: 1 } });
    expect(found.map((p) => p.split(':')[0])).toEqual(['type', 'name', 'id', 'plugin_id', 'capacity_max', 'parameters.a']);
  });

  it('gives a volume without capability blocks one single-node-writer file-system capability', () => {
    const spec = validateVolumeSpec({ type: 'host', name: 'a', plugin_id: 'mkdir' }, 'create');
    expect(spec.capabilities).toEqual([{ accessMode: 'single-node-writer', attachmentMode: 'file-system' }]);
    expect(spec.parameters).toBeNull();
    expect(spec.namespace).toBe('default');
  });

  it('checks capability modes and refuses distinct_hosts and distinct_property constraints', () => {
    const found = problems({
      type: 'host',
      name: 'a',
      plugin_id: 'mkdir',
      capability: [{ access_mode: 'multi-node-writer', attachment_mode: 'file-system' }],
      constraint: [{ operator: 'distinct_hosts', value: 'true' }, { operator: 'distinct_property', attribute: '${node.rack}' }],
    });
    expect(found).toHaveLength(3);
    expect(found[0]).toMatch(/^capability\[0\]\.access_mode/);
    expect(found[1]).toMatch(/^constraint\[0\]\.operator: "distinct_hosts"/);
  });

  it('needs host_path, not plugin_id, to register', () => {
    expect(problems({ type: 'host', name: 'a' }, 'register')).toEqual([expect.stringMatching(/^host_path: missing/)]);
    expect(problems({ type: 'host', name: 'a', host_path: '/srv/a' }, 'register')).toEqual([]);
  });

  it('reads HCL with blocks, and JSON, from stdin', async () => {
    const hcl = 'type = "host"\nname = "x"\nplugin_id = "mkdir"\nparameters {\n  mode = "0755"\n}\ncapability {\n  access_mode = "single-node-reader-only"\n  attachment_mode = "block-device"\n}\n';
    const spec = await readVolumeSpec('-', 'create', Readable.from([hcl]));
    expect(spec.parameters).toEqual({ mode: '0755' });
    expect(spec.capabilities).toEqual([{ accessMode: 'single-node-reader-only', attachmentMode: 'block-device' }]);
    const json = await readVolumeSpec('-', 'create', Readable.from([JSON.stringify({ type: 'host', name: 'y', plugin_id: 'p', capacity_min: 1024 })]));
    expect(json.capacityMinBytes).toBe(1024n);
  });

  it('names the file and the parser problem for a spec that is not HCL', async () => {
    await expect(readVolumeSpec('-', 'create', Readable.from(['name = '])) ).rejects.toMatchObject({ code: 'SPEC_INVALID', message: expect.stringMatching(/<stdin> is not valid HCL/) });
  });
});
