import { dirname } from 'node:path';
import { statfs } from './fs-calls.js';

export interface DiskSpace {
  /** Bytes an unprivileged writer may still use. */
  free: bigint;
  size: bigint;
}

/**
 * Free space on the filesystem holding `path` (or its closest existing parent), from
 * statfs(2) in this process: what `df` reports as available and as size, without
 * starting a process for it.
 */
export async function diskSpace(path: string): Promise<DiskSpace> {
  for (let at = path; ; at = dirname(at)) {
    try {
      const stats = await statfs(at, { bigint: true });
      return { free: stats.bavail * stats.bsize, size: stats.blocks * stats.bsize };
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if ((code !== 'ENOENT' && code !== 'ENOTDIR') || dirname(at) === at) throw err;
    }
  }
}
