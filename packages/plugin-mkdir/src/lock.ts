import { basename, dirname, join } from 'node:path';
import { fsCalls, PluginFailure, withVolumeLock } from '@dhv/sdk/plugin';
import { lstatIfExists } from './fs-safe.js';

const { rm, unlink } = fsCalls;

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

/** Where a create builds the volume's directory before renaming it to the volume path; only a lock holder touches it. */
export function stagingPathFor(volumePath: string): string {
  return join(dirname(volumePath), `.dhv-mkdir-${basename(volumePath)}.new`);
}

export function withVolumePathLock<T>(volumePath: string, signal: AbortSignal, fn: () => Promise<T>): Promise<T> {
  return withVolumeLock(lockFileFor(volumePath), fn, { signal });
}

/** Removes what a create killed before its rename left at `staging` (call with the lock held). */
export async function removeLeftStaging(staging: string): Promise<void> {
  const left = await lstatIfExists(staging);
  if (!left) return;
  if (!left.isDirectory()) return unlink(staging);
  const { mountPointsWithin } = await import('./mounts.js');
  const mounted = await mountPointsWithin(staging);
  if (mounted.length > 0) {
    throw new PluginFailure(
      'EMOUNTED',
      `refusing to remove ${staging}, left by a create that was stopped: ${mounted.join(', ')} is mounted inside it; unmount it and try again`,
      { path: staging, mountPoints: mounted },
    );
  }
  await rm(staging, { recursive: true, force: true });
}
