import { realpath } from 'node:fs/promises';
import { MOUNTINFO, entriesAtOrBelow, readMountTable } from '@dhv/sdk/host';

/**
 * Mount points at `dir` or below it (the folder itself counts). Deleting a volume must
 * not reach into a filesystem someone mounted inside it (a bind mount left by a
 * workload, a disk): removing recursively would erase that filesystem's files too.
 * Returns [] where /proc is absent.
 */
export async function mountPointsWithin(dir: string, mountinfoPath = MOUNTINFO): Promise<string[]> {
  const table = await readMountTable(mountinfoPath);
  return entriesAtOrBelow(table, await realpath(dir)).map((m) => m.mountPoint);
}
