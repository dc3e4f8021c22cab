import { realpath, rm } from 'node:fs/promises';
import { volumesDiskFoldersBelow } from '@dhv/sdk/plugin';

/**
 * The reference plugins record, outside the volumes dir, which disk each volumes dir was
 * on (`/var/lib/<plugin>/volumes-dirs/`, or `~/.local/state/<plugin>/` when not root).
 * A test's volumes dirs live in its temp dir; their records go with it.
 */
const RECORDING_PLUGINS = ['dhv-mkdir', 'dhv-loopback'] as const;

/** The reference plugins' record folders of every volumes dir at or below `dir` (real paths). */
export async function diskRecordFoldersBelow(dir: string): Promise<string[]> {
  const folders: string[] = [];
  for (const plugin of RECORDING_PLUGINS) folders.push(...(await volumesDiskFoldersBelow(plugin, dir)));
  return folders;
}

/** Removes them; `dir` is resolved first, so call it before the folder itself goes. */
export async function forgetDiskRecordsBelow(dir: string): Promise<void> {
  const real = await realpath(dir).catch(() => dir);
  for (const folder of await diskRecordFoldersBelow(real)) await rm(folder, { recursive: true, force: true });
}
