import { realpath, rm } from 'node:fs/promises';
import { volumesDiskFoldersBelow } from '@dhv/sdk/host';
import { PLUGIN_NAME } from '../version.js';

/** Removes a test's temp dir, and dhv-mkdir's records of the volumes dirs in it (kept in the plugin's state dir, outside it). */
export async function removeTestDir(dir: string | undefined): Promise<void> {
  if (!dir) return;
  for (const { folder } of await volumesDiskFoldersBelow(PLUGIN_NAME, await realpath(dir).catch(() => dir)))
    await rm(folder, { recursive: true, force: true });
  await rm(dir, { recursive: true, force: true });
}
