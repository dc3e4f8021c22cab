import { describe, expect, it } from 'vitest';
import { sampleRecord } from '../../../../test/support/volume-record.js';
import { toHostVolume } from './volume-view.js';

const ID = '5e0c4a2b-9d3e-4b7a-8c6d-5e4f3a2b1c0d';

describe("a volume as Nomad's API writes it", () => {
  it('omits Constraints and Parameters when there are none, as Nomad omits them, and keeps them when set', () => {
    const bare = toHostVolume(sampleRecord(ID, { Parameters: null }), 'ready');
    expect(Object.keys(bare)).not.toContain('Constraints');
    expect(Object.keys(bare)).not.toContain('Parameters');
    // An empty parameters block reaches the servers as none.
    expect(Object.keys(toHostVolume(sampleRecord(ID, { Parameters: {} }), 'ready'))).not.toContain('Parameters');

    const record = sampleRecord(ID);
    record.Volume.Constraints = [{ LTarget: '${attr.kernel.name}', RTarget: 'linux', Operand: '=' }];
    const full = toHostVolume(record, 'ready');
    expect(full.Parameters).toEqual({ mode: '0755' });
    expect(full.Constraints).toEqual(record.Volume.Constraints);
  });

  it("names the plugin a registered volume was registered with (the servers' record), not the client's empty one", () => {
    const record = sampleRecord(ID, { PluginID: '' });
    expect(toHostVolume(record, 'ready').PluginID).toBe('');
    record.Volume.PluginID = 'fail-delete';
    expect(toHostVolume(record, 'ready').PluginID).toBe('fail-delete');
  });
});
