import { lstat, mkdir } from 'node:fs/promises';
import { PluginFailure, volumePath } from '@dhv/sdk/plugin';

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

/** Makes the volumes dir (as `mkdir` would) and the hidden state folder (root only). */
export async function ensureStateDir(layout: VolumeLayout): Promise<void> {
  await mkdir(layout.volumesDir, { recursive: true, mode: 0o755 });
  await expectDirectoryOrMissing(layout.stateDir, 'image folder');
  await mkdir(layout.stateDir, { mode: 0o700 }).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'EEXIST') throw err;
  });
  await expectDirectoryOrMissing(layout.stateDir, 'image folder');
}
