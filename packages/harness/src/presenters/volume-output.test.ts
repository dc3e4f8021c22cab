import { describe, expect, it } from 'vitest';
import { toHostVolume } from '../agent/volume-view.js';
import { sampleRecord } from '../../../../test/support/volume-record.js';
import { volumeCreatedText } from './volume-output.js';

describe("what nomad volume create's monitor prints", () => {
  it('cuts the volume name to 8 characters, as Nomad\'s monitor does (Volume "team-dat" ready), and not with -verbose', () => {
    const volume = toHostVolume(sampleRecord('5e0c4a2b-9d3e-4b7a-8c6d-5e4f3a2b1c0d', { Name: 'team-data' }), 'ready');
    const lines = volumeCreatedText(volume, { detach: false, verbose: false, tty: false }).split('\n');
    expect(lines[0]).toBe('==> Created host volume team-data with ID 5e0c4a2b-9d3e-4b7a-8c6d-5e4f3a2b1c0d');
    expect(lines[1]).toMatch(/: Monitoring volume "5e0c4a2b"\.\.\.$/);
    expect(lines[2]).toMatch(/: Volume "team-dat" ready$/);
    const verbose = volumeCreatedText(volume, { detach: false, verbose: true, tty: false });
    expect(verbose).toMatch(/: Volume "team-data" ready$/);
  });
});
