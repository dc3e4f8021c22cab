import { describe, expect, it } from 'vitest';
import type { HostVolume } from './volume-view.js';
import { lookupVolume } from './volume-lookup.js';

const volume = (ID: string, Name: string, Namespace = 'default') => ({ ID, Name, Namespace }) as HostVolume;
const volumes = [
  volume('1e1d4540-0000-4000-8000-000000000001', 'data'),
  volume('1e1d4541-0000-4000-8000-000000000002', 'database'),
  volume('7a000000-0000-4000-8000-000000000003', 'data', 'prod'),
  volume('8b000000-0000-4000-8000-000000000004', 'logs', 'prod'),
];

describe("finding the volume a user named, as Nomad's CLI does", () => {
  it('matches an ID prefix or a name prefix, within the namespace', () => {
    expect(lookupVolume(volumes, '1e1d4540', 'default')).toEqual({ found: volumes[0] });
    expect(lookupVolume(volumes, 'datab', 'default')).toEqual({ found: volumes[1] });
    expect(lookupVolume(volumes, 'logs', 'default')).toEqual({ none: true });
    expect(lookupVolume(volumes, 'logs', 'prod')).toEqual({ found: volumes[3] });
  });

  it('narrows several matches to the one named exactly, and is ambiguous otherwise', () => {
    expect(lookupVolume(volumes, 'data', 'default')).toEqual({ found: volumes[0] });
    expect(lookupVolume(volumes, '1e1d454', 'default')).toEqual({ ambiguous: [volumes[0], volumes[1]] });
    // Two volumes named "data" in two namespaces: -namespace * cannot tell them apart.
    expect(lookupVolume(volumes, 'data', '*')).toEqual({ ambiguous: [volumes[0], volumes[1], volumes[2]] });
  });
});
