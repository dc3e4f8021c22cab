import { PluginFailure } from './errors.js';
import { ENV } from '../protocol/variables.js';
import { formatSize } from '../go/humanize.js';

export interface CapacityRules {
  /** The smallest volume the plugin can make (xfs: 300 MiB). A request below it gets this much when capacity_max allows. */
  minimum?: bigint;
  /** Sizes are whole multiples of this (a loop device: 512-byte sectors). Default 1 byte. */
  granularity?: bigint;
  /** Rounding tried before `granularity`, coarsest first, when it fits between min and max (e.g. whole MiB). */
  preferred?: readonly bigint[];
  /** The size when the spec sets neither capacity; without it such a request is refused. */
  fallback?: bigint;
}

const roundUp = (n: bigint, unit: bigint) => ((n + unit - 1n) / unit) * unit;

/**
 * The size to make for a create's capacity_min and capacity_max (0 = not set), within the
 * plugin's own rules: capacity_min (or capacity_max when only that is set, or the fallback),
 * raised to the plugin's minimum, rounded up to the coarsest unit that still fits under
 * capacity_max, else rounded down to one that stays at or above capacity_min. When nothing
 * fits, the failure names the range and what to set.
 */
export function pickCapacity(capacityMinBytes: bigint, capacityMaxBytes: bigint, rules: CapacityRules = {}): bigint {
  const granularity = rules.granularity ?? 1n;
  const minimum = rules.minimum ?? 0n;
  const asked = capacityMinBytes > 0n ? capacityMinBytes : capacityMaxBytes > 0n ? capacityMaxBytes : rules.fallback;
  if (asked === undefined || asked === 0n) {
    throw new PluginFailure(
      'ECAPACITYREQUIRED',
      `a capacity is required: set capacity_min (or capacity_max) in the volume spec (${ENV.capacityMinBytes} and ${ENV.capacityMaxBytes} are both 0)`,
    );
  }
  if (capacityMaxBytes > 0n && capacityMaxBytes < minimum) {
    throw new PluginFailure(
      'ECAPACITYTOOSMALL',
      `this plugin makes volumes of at least ${formatSize(minimum)}, but capacity_max is ${formatSize(capacityMaxBytes)}; raise capacity_max to ${formatSize(minimum)} or more`,
      { minimum, capacityMax: capacityMaxBytes },
    );
  }
  const wanted = asked < minimum ? minimum : asked;
  const floor = capacityMinBytes > minimum ? capacityMinBytes : minimum;
  for (const unit of [...(rules.preferred ?? []), granularity]) {
    const up = roundUp(wanted, unit);
    if (capacityMaxBytes === 0n || up <= capacityMaxBytes) return up;
    const down = (capacityMaxBytes / unit) * unit;
    if (down >= floor && down > 0n) return down;
  }
  throw new PluginFailure(
    'ECAPACITYRANGE',
    `no size in whole units of ${formatSize(granularity)} lies between capacity_min (${formatSize(capacityMinBytes)}) and capacity_max (${formatSize(capacityMaxBytes)}); widen the range`,
    { capacityMin: capacityMinBytes, capacityMax: capacityMaxBytes },
  );
}
