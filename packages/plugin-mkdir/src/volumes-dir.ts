import { dirname } from 'node:path';
import { ENV, fsCalls, PluginFailure } from '@dhv/sdk/plugin';
import { errnoOf, openDirectoryNoFollow } from './fs-safe.js';

const { mkdir, stat } = fsCalls;

/** The agent's volumes dir when dhv-mkdir has to make it: others may pass through, not list it. */
export const VOLUMES_DIR_MODE = 0o711;

/**
 * Whether the volumes dir is there, or may be made. A missing one may be created only
 * when its parent exists: a missing parent more likely means a mistyped host_volumes_dir
 * or an unmounted disk than a wish for a new directory tree. Touches nothing.
 */
export async function inspectVolumesDir(dir: string): Promise<'exists' | 'missing'> {
  const existing = await stat(dir).catch((err: unknown) => {
    if (errnoOf(err) === 'ENOENT') return undefined;
    throw volumesDirError(dir, `cannot be examined: ${(err as Error).message}`);
  });
  if (existing) {
    if (!existing.isDirectory()) throw volumesDirError(dir, 'exists but is not a directory');
    return 'exists';
  }
  const parent = dirname(dir);
  const parentStats = await stat(parent).catch(() => undefined);
  if (!parentStats?.isDirectory()) {
    throw volumesDirError(
      dir,
      `does not exist, and neither does its parent ${parent}, so it was not created; ` +
        `create ${parent} (or mount the disk that belongs there), or set host_volumes_dir to an existing directory`,
    );
  }
  return 'missing';
}

/** Creates the volumes dir with mode 0711 exactly (umask ignored); another create making it first is fine. */
export async function makeVolumesDir(dir: string): Promise<void> {
  try {
    await mkdir(dir, { mode: VOLUMES_DIR_MODE });
  } catch (err) {
    if (errnoOf(err) === 'EEXIST') return;
    throw volumesDirError(dir, `could not be created: ${(err as Error).message}`);
  }
  const handle = await openDirectoryNoFollow(dir);
  try {
    await handle.chmod(VOLUMES_DIR_MODE);
  } finally {
    await handle.close();
  }
}

function volumesDirError(dir: string, problem: string): PluginFailure {
  return new PluginFailure('EVOLUMESDIR', `volumes dir ${dir} (${ENV.volumesDir}) ${problem}`, { volumesDir: dir });
}
