import { describe, expect, it } from 'vitest';
import { MIB, provisionedSize } from './size.js';

describe('provisioned size', () => {
  it('rounds capacity_min up to a whole MiB', () => {
    expect(provisionedSize(1n, 0n)).toBe(MIB);
    expect(provisionedSize(50_000_000n, 0n)).toBe(48n * MIB);
    expect(provisionedSize(1024n * MIB, 0n)).toBe(1024n * MIB);
  });

  it('uses capacity_max when only it is set, rounded down when rounding up would pass it', () => {
    expect(provisionedSize(0n, 100n * MIB)).toBe(100n * MIB);
    expect(provisionedSize(0n, 100n * MIB + 1n)).toBe(100n * MIB);
  });

  it('never goes above capacity_max, using a finer unit when no whole MiB fits', () => {
    expect(provisionedSize(50_000_000n, 50_001_000n)).toBe(50_000_384n); // whole 512-byte sectors
    expect(provisionedSize(48n * MIB + 1n, 48n * MIB + 8192n)).toBe(48n * MIB + 4096n);
  });

  it('always lies between capacity_min and capacity_max', () => {
    for (const [min, max] of [
      [1n, 0n],
      [123_456_789n, 200_000_000n],
      [999_999_999n, 1_000_000_000n],
      [0n, 7n * MIB + 3n],
      [1n, 1000n],
    ] as const) {
      const size = provisionedSize(min, max);
      expect(size).toBeGreaterThanOrEqual(min);
      if (max !== 0n) expect(size).toBeLessThanOrEqual(max);
    }
  });

  it('says a capacity is required when both are zero, and when no sector fits in the range', () => {
    expect(() => provisionedSize(0n, 0n)).toThrow(/a capacity is required/);
    expect(() => provisionedSize(MIB + 1n, MIB + 100n)).toThrow(
      /no size in whole units of 512 B lies between capacity_min/,
    );
  });
});
