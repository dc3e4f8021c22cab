import { basename, dirname, join } from 'node:path';
import { withVolumeLock } from '@dhv/sdk/plugin';

/**
 * Create and delete of one volume run one at a time across processes. The agent already
 * serializes calls per volume name, but an operator's script, a second agent, or a
 * restore racing a delete should still never see a half-made directory (created but not
 * yet chowned) or remove one mid-create. The lock file sits beside the volume, in the
 * volumes dir that must exist anyway, and is gone again when the call ends.
 */
export function lockFileFor(volumePath: string): string {
  return join(dirname(volumePath), `.dhv-mkdir-${basename(volumePath)}.lock`);
}

export function withVolumePathLock<T>(volumePath: string, signal: AbortSignal, fn: () => Promise<T>): Promise<T> {
  return withVolumeLock(lockFileFor(volumePath), fn, { signal });
}
