import { describe, expect, it } from 'vitest';
import { PluginFailure } from '@dhv/sdk/plugin';
import { provisionedBytes, reportedBytes } from './capacity.js';

const GiB = 1n << 30n;

describe('capacity', () => {
  it('reports all the free space when capacity_max is not set', () => {
    expect(provisionedBytes(10n * GiB, { capacityMinBytes: 0n, capacityMaxBytes: 0n }, '/v')).toBe(10n * GiB);
  });

  it('caps the free space at capacity_max', () => {
    expect(provisionedBytes(10n * GiB, { capacityMinBytes: GiB, capacityMaxBytes: 2n * GiB }, '/v')).toBe(2n * GiB);
    expect(provisionedBytes(GiB, { capacityMinBytes: 0n, capacityMaxBytes: 2n * GiB }, '/v')).toBe(GiB);
  });

  it('accepts free space exactly equal to capacity_min', () => {
    expect(provisionedBytes(GiB, { capacityMinBytes: GiB, capacityMaxBytes: 0n }, '/v')).toBe(GiB);
  });

  it('refuses less free space than capacity_min, giving both in human units and bytes', () => {
    let err: unknown;
    try {
      provisionedBytes(47n * 1024n * 1024n, { capacityMinBytes: 100n * GiB, capacityMaxBytes: 0n }, '/srv/volumes');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(PluginFailure);
    expect(err).toMatchObject({
      code: 'ECAPACITY',
      details: { free: 47n * 1024n * 1024n, capacityMinBytes: 100n * GiB },
    });
    expect((err as Error).message).toContain(
      'needs 100 GiB (107374182400 bytes), but the filesystem holding /srv/volumes has 47 MiB (49283072 bytes) free',
    );
  });

  it('reports an existing volume without checking capacity_min', () => {
    expect(reportedBytes(1n, { capacityMinBytes: GiB, capacityMaxBytes: 0n })).toBe(1n);
    expect(reportedBytes(5n * GiB, { capacityMinBytes: GiB, capacityMaxBytes: 2n * GiB })).toBe(2n * GiB);
  });
});
