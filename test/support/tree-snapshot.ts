import { createHash } from 'node:crypto';
import { lstat, readdir, readFile, readlink } from 'node:fs/promises';
import { join } from 'node:path';

export interface TreeEntry {
  path: string;
  type: 'file' | 'dir' | 'symlink' | 'other';
  mode: string;
  uid: number;
  gid: number;
  /** sha256 of a file's contents, a symlink's target, or '' for directories. */
  content: string;
}

/**
 * Every entry under `root` (root included), without following symlinks: path, type,
 * permission bits, owner and a hash of the contents or the link target. Two snapshots
 * are equal exactly when nothing under `root` changed in a way a user could notice.
 */
export async function snapshotTree(root: string): Promise<TreeEntry[]> {
  const entries: TreeEntry[] = [];
  const visit = async (path: string, rel: string): Promise<void> => {
    const info = await lstat(path);
    const base = {
      path: rel || '.',
      mode: (info.mode & 0o7777).toString(8).padStart(4, '0'),
      uid: info.uid,
      gid: info.gid,
    };
    if (info.isSymbolicLink()) {
      entries.push({ ...base, type: 'symlink', content: `-> ${await readlink(path)}` });
    } else if (info.isDirectory()) {
      entries.push({ ...base, type: 'dir', content: '' });
      for (const name of (await readdir(path)).sort()) await visit(join(path, name), rel ? `${rel}/${name}` : name);
    } else if (info.isFile()) {
      entries.push({
        ...base,
        type: 'file',
        content: createHash('sha256')
          .update(await readFile(path))
          .digest('hex'),
      });
    } else {
      entries.push({ ...base, type: 'other', content: '' });
    }
  };
  await visit(root, '');
  return entries;
}
