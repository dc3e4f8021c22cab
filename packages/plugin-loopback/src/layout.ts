import { chmod, lstat, mkdir, rmdir, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { ENV, PluginFailure, volumePath } from '@dhv/sdk/plugin';

/** The hidden folder of the volumes dir that holds images and locks. */
export const STATE_DIR_NAME = '.dhv-loopback';

export interface VolumeLayout {
  volumesDir: string;
  /** Where the filesystem is mounted: `<volumes dir>/<id>`, the path create reports. */
  mountPath: string;
  stateDir: string;
  imagePath: string;
  /** An image being made; only renamed to imagePath once its filesystem exists, so a killed create is never mistaken for a volume. */
  partialImagePath: string;
  lockPath: string;
}

export function volumeLayout(volumesDir: string, volumeId: string): VolumeLayout {
  const mountPath = volumePath(volumesDir, volumeId);
  const root = mountPath.slice(0, mountPath.length - volumeId.length - 1);
  const stateDir = `${root}/${STATE_DIR_NAME}`;
  return {
    volumesDir: root,
    mountPath,
    stateDir,
    imagePath: `${stateDir}/${volumeId}.img`,
    partialImagePath: `${stateDir}/${volumeId}.img.partial`,
    lockPath: `${stateDir}/${volumeId}.lock`,
  };
}

/** The kind of thing at a path, without following a final symlink. */
export async function entryKind(path: string): Promise<'missing' | 'directory' | 'file' | 'symlink' | 'other'> {
  try {
    const stats = await lstat(path);
    if (stats.isSymbolicLink()) return 'symlink';
    if (stats.isDirectory()) return 'directory';
    if (stats.isFile()) return 'file';
    return 'other';
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
    throw err;
  }
}

/**
 * Refuses a symlink or a non-directory where the plugin keeps its images or mounts a
 * volume: following one would let whoever planted it choose where root writes.
 */
export async function expectDirectoryOrMissing(path: string, what: string): Promise<void> {
  const kind = await entryKind(path);
  if (kind === 'missing' || kind === 'directory') return;
  throw new PluginFailure(
    'EUNSAFEPATH',
    `refusing to use ${path} as the ${what}: it is a ${kind === 'symlink' ? 'symlink' : `${kind}, not a directory`}; remove it and try again`,
    { path },
  );
}

/** The volumes dir when the plugin has to make it: others may pass through, not list it (as dhv-mkdir makes it). */
export const VOLUMES_DIR_MODE = 0o711;

/**
 * Makes the volumes dir, as dhv-mkdir does: only when its parent exists (a missing parent
 * more likely means a mistyped host_volumes_dir or an unmounted disk), then the hidden
 * folder for images and locks, readable by root only.
 */
export async function ensureStateDir(layout: VolumeLayout): Promise<MadeFolders> {
  const made: MadeFolders = { volumesDir: false };
  const volumesDir = await stat(layout.volumesDir).catch(() => undefined);
  if (volumesDir === undefined) {
    const parent = dirname(layout.volumesDir);
    if (!(await stat(parent).catch(() => undefined))?.isDirectory()) {
      throw new PluginFailure(
        'EVOLUMESDIR',
        `volumes dir ${layout.volumesDir} (${ENV.volumesDir}) does not exist, and neither does its parent ${parent}, so it was not created; create ${parent} (or mount the disk that should be there), or set host_volumes_dir to an existing directory`,
        { volumesDir: layout.volumesDir },
      );
    }
    made.volumesDir = await mkdir(layout.volumesDir, { mode: VOLUMES_DIR_MODE }).then(
      () => true,
      (err: NodeJS.ErrnoException) => {
        if (err.code !== 'EEXIST') throw err;
        return false;
      },
    );
    await chmod(layout.volumesDir, VOLUMES_DIR_MODE);
  } else if (!volumesDir.isDirectory()) {
    throw new PluginFailure(
      'EVOLUMESDIR',
      `volumes dir ${layout.volumesDir} (${ENV.volumesDir}) exists but is not a directory`,
      {
        volumesDir: layout.volumesDir,
      },
    );
  }
  await expectDirectoryOrMissing(layout.stateDir, 'image folder');
  await mkdir(layout.stateDir, { mode: 0o700 }).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'EEXIST') throw err;
  });
  await expectDirectoryOrMissing(layout.stateDir, 'image folder');
  return made;
}

/** Which folders ensureStateDir had to make (the hidden folder is always judged by whether it is empty). */
export interface MadeFolders {
  volumesDir: boolean;
}

/**
 * Removes the hidden folder once no volume, image or lock is left in it, and the volumes
 * dir when this call made it and it is empty again: a failed create, or the delete of the
 * last volume, leaves no trace. rmdir refuses a folder that is not empty, so a concurrent
 * create (whose lock file is in there) keeps it; the SDK's lock makes the folder again if
 * it vanishes before that lock is taken.
 */
export async function removeEmptyFolders(layout: VolumeLayout, made: MadeFolders): Promise<void> {
  const removed = await removeIfEmpty(layout.stateDir);
  if (removed && made.volumesDir) await removeIfEmpty(layout.volumesDir);
}

async function removeIfEmpty(path: string): Promise<boolean> {
  try {
    await rmdir(path);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOTEMPTY' || code === 'EEXIST' || code === 'ENOENT' || code === 'EBUSY') return false;
    throw err;
  }
}
