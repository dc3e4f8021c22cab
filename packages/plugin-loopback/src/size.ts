import { pickCapacity } from '@dhv/sdk/plugin';

export const MIB = 1024n * 1024n;

/**
 * The image size for a request: capacity_min (or capacity_max when only that is set),
 * rounded up to a whole MiB, but never above capacity_max (then capacity_max rounded
 * down, if that is still at least capacity_min). When no whole MiB fits between the
 * two, a finer unit is used; a loop device needs whole 512-byte sectors.
 */
export function provisionedSize(capacityMin: bigint, capacityMax: bigint): bigint {
  return pickCapacity(capacityMin, capacityMax, { granularity: 512n, preferred: [MIB, 4096n] });
}
