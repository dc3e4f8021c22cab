import { ENV, PluginFailure, formatSize } from '@dhv/sdk/plugin';

export const MIB = 1024n * 1024n;

const roundUp = (n: bigint, unit: bigint) => ((n + unit - 1n) / unit) * unit;

/**
 * The image size for a request: capacity_min (or capacity_max when only that is set),
 * rounded up to a whole MiB, but never above capacity_max (then capacity_max rounded
 * down, if that is still at least capacity_min). When no whole MiB fits between the
 * two, a finer unit is used; a loop device needs whole 512-byte sectors.
 */
export function provisionedSize(capacityMin: bigint, capacityMax: bigint): bigint {
  const wanted = capacityMin > 0n ? capacityMin : capacityMax;
  if (wanted === 0n) {
    throw new PluginFailure(
      'ECAPACITYREQUIRED',
      `a capacity is required: set capacity_min (or capacity_max) in the volume spec (${ENV.capacityMinBytes} and ${ENV.capacityMaxBytes} are both 0)`,
    );
  }
  for (const unit of [MIB, 4096n, 512n]) {
    const up = roundUp(wanted, unit);
    if (capacityMax === 0n || up <= capacityMax) return up;
    const down = (capacityMax / unit) * unit;
    if (down >= capacityMin && down > 0n) return down;
  }
  throw new PluginFailure(
    'ECAPACITYRANGE',
    `no whole number of 512-byte sectors lies between capacity_min (${formatSize(capacityMin)}) and capacity_max (${formatSize(capacityMax)}); widen the range`,
    { capacityMin, capacityMax },
  );
}
