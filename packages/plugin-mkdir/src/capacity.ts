import { diskSpace, formatSize, PluginFailure } from '@dhv/sdk/plugin';

export interface CapacityRequest {
  /** 0 when the spec sets no capacity_min. */
  capacityMinBytes: bigint;
  /** 0 when the spec sets no capacity_max. */
  capacityMaxBytes: bigint;
}

/**
 * What a directory volume can hold is what its filesystem has free, so that is what
 * create reports as `bytes`, capped at capacity_max. A volume that could not hold
 * capacity_min is refused.
 */
export function provisionedBytes(
  free: bigint,
  { capacityMinBytes, capacityMaxBytes }: CapacityRequest,
  where: string,
): bigint {
  if (free < capacityMinBytes) {
    throw new PluginFailure(
      'ECAPACITY',
      `not enough free space for capacity_min: the volume needs ${formatSize(capacityMinBytes)} (${capacityMinBytes} bytes), ` +
        `but the filesystem holding ${where} has ${formatSize(free)} (${free} bytes) free; free some space, lower capacity_min, ` +
        `or point host_volumes_dir at a larger filesystem`,
      { free, capacityMinBytes, path: where },
    );
  }
  return reportedBytes(free, { capacityMinBytes, capacityMaxBytes });
}

/**
 * The bytes a volume may use: free space capped at capacity_max. Used alone for a volume
 * that already exists, which restore must never fail.
 */
export function reportedBytes(free: bigint, { capacityMaxBytes }: CapacityRequest): bigint {
  return capacityMaxBytes > 0n && free > capacityMaxBytes ? capacityMaxBytes : free;
}

export async function freeSpace(path: string): Promise<bigint> {
  try {
    return (await diskSpace(path)).free;
  } catch (err) {
    if (err instanceof PluginFailure) throw err;
    throw new PluginFailure('EDISKSPACE', `could not measure the free space under ${path}: ${(err as Error).message}`, {
      path,
    });
  }
}
