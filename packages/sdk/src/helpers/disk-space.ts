import { promises as fs } from 'node:fs';
import { dirname } from 'node:path';

export interface DiskSpace {
  /** Bytes an unprivileged writer may still use. */
  free: bigint;
  size: bigint;
}

/**
 * Free space on the filesystem holding `path` (or its closest existing parent), from
 * statfs(2) in this process: what `df` reports as available and as size, without
 * starting a process for it. `fs.promises` is read only here, when called: building it
 * loads modules that would cost every fingerprint a few milliseconds.
 */
export async function diskSpace(path: string): Promise<DiskSpace> {
  for (let at = path; ; at = dirname(at)) {
    try {
      const stats = await fs.statfs(at, { bigint: true });
      return { free: stats.bavail * stats.bsize, size: stats.blocks * stats.bsize };
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if ((code !== 'ENOENT' && code !== 'ENOTDIR') || dirname(at) === at) throw err;
    }
  }
}
