import { existsSync } from 'node:fs';
import { realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { volumesDiskFoldersBelow } from '@dhv/sdk/host';

/**
 * The reference plugins record, outside the volumes dir, which disk each volumes dir was
 * on (`/var/lib/<plugin>/volumes-dirs/`, or `~/.local/state/<plugin>/` when not root).
 * A test's volumes dirs live in its temp dir; their records go with it.
 */
const RECORDING_PLUGINS = ['dhv-mkdir', 'dhv-loopback'] as const;

/** The reference plugins' record folders of every volumes dir at or below `dir` (real paths). */
export async function diskRecordFoldersBelow(dir: string): Promise<string[]> {
  const folders: string[] = [];
  for (const plugin of RECORDING_PLUGINS)
    folders.push(...(await volumesDiskFoldersBelow(plugin, dir)).map((r) => r.folder));
  return folders;
}

/** Removes them; `dir` is resolved first, so call it before the folder itself goes. */
export async function forgetDiskRecordsBelow(dir: string): Promise<void> {
  const real = await realpath(dir).catch(() => dir);
  for (const folder of await diskRecordFoldersBelow(real)) await rm(folder, { recursive: true, force: true });
}

/**
 * The net under the tests that remove their temp dir without `removeTempDir`: record
 * folders of volumes dirs inside a `dhv-*` folder of the temp dirs (`tempDir`'s
 * and the loopback tests') that is gone. A folder that still exists may be a running
 * test's, so it is left alone; one that is gone is used by nobody.
 */
export async function forgetDiskRecordsOfGoneTempDirs(): Promise<number> {
  const roots = [...new Set([await realpath(tmpdir()).catch(() => tmpdir()), '/tmp', '/var/tmp'])];
  let removed = 0;
  for (const plugin of RECORDING_PLUGINS) {
    for (const { folder, volumesDir } of await volumesDiskFoldersBelow(plugin, '/')) {
      const root = roots.find((r) => volumesDir.startsWith(`${r}/`));
      if (root === undefined) continue;
      const top = relative(root, volumesDir).split('/')[0]!;
      if (!top.startsWith('dhv-') || existsSync(join(root, top))) continue;
      await rm(folder, { recursive: true, force: true });
      removed++;
    }
  }
  return removed;
}
