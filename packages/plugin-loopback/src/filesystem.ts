import { open } from 'node:fs/promises';
import { PluginFailure } from '@dhv/sdk/plugin';
import type { FilesystemType } from './parameters.js';
import { tool } from './tools.js';

/**
 * mkfs arguments that keep creation fast however large the image: ext4 leaves inode
 * tables and the journal to be initialised lazily, and neither tool discards (on a
 * preallocated image a discard would punch the reserved blocks out again). ext4
 * reserves no blocks for root (`-m 0`): a volume's capacity is all for its workloads.
 */
const MKFS: Record<FilesystemType, { tool: 'mkfs.ext4' | 'mkfs.xfs'; args: string[] }> = {
  ext4: { tool: 'mkfs.ext4', args: ['-q', '-F', '-m', '0', '-E', 'lazy_itable_init=1,lazy_journal_init=1,nodiscard'] },
  xfs: { tool: 'mkfs.xfs', args: ['-q', '-K'] },
};

export async function makeFilesystem(fs: FilesystemType, imagePath: string, signal?: AbortSignal): Promise<void> {
  const { tool: mkfs, args } = MKFS[fs];
  await tool(mkfs, [...args, imagePath], signal);
}

/** The filesystem in an image, read from its superblock magic (ext4: 0xEF53 at 1080; xfs: "XFSB" at 0). */
export async function detectFilesystem(imagePath: string): Promise<FilesystemType | undefined> {
  const handle = await open(imagePath, 'r');
  try {
    const buffer = Buffer.alloc(1082);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    if (bytesRead >= 4 && buffer.toString('latin1', 0, 4) === 'XFSB') return 'xfs';
    if (bytesRead >= 1082 && buffer.readUInt16LE(1080) === 0xef53) return 'ext4';
    return undefined;
  } finally {
    await handle.close();
  }
}

/**
 * Checks an unmounted filesystem before it is mounted again after a reboot. e2fsck -p
 * repairs what is safe to repair; xfs repairs itself by replaying its log at mount, so
 * xfs_repair only looks (-n), and a log waiting to be replayed is not an error.
 */
export async function checkFilesystem(fs: FilesystemType, device: string, signal?: AbortSignal): Promise<void> {
  try {
    if (fs === 'ext4') await tool('e2fsck', ['-p', device], signal);
    else await tool('xfs_repair', ['-n', device], signal);
  } catch (err) {
    const exitCode = err instanceof PluginFailure ? err.details.exitCode : undefined;
    const stderr = String(err instanceof PluginFailure ? (err.details.stderr ?? '') : '');
    // e2fsck: 1 = errors corrected, 2 = corrected, reboot advised (for the root fs only).
    if (fs === 'ext4' && (exitCode === 1 || exitCode === 2)) return;
    if (fs === 'xfs' && /log/i.test(stderr) && /replay/i.test(stderr)) return;
    throw new PluginFailure(
      'EFSCHECK',
      `the ${fs} filesystem on ${device} has errors that were not repaired, so it was not mounted: ${err instanceof Error ? err.message : String(err)}; repair it by hand (${fs === 'ext4' ? 'e2fsck -f' : 'xfs_repair'} ${device}) and create again`,
      { device },
    );
  }
}

/** Grows the filesystem on a mounted volume to fill its (already grown) loop device. */
export async function growFilesystemOnline(
  fs: FilesystemType,
  device: string,
  mountPath: string,
  signal?: AbortSignal,
): Promise<void> {
  if (fs === 'xfs') await tool('xfs_growfs', [mountPath], signal);
  else await tool('resize2fs', [device], signal);
}

/** Grows an unmounted ext4 filesystem; resize2fs wants a freshly checked filesystem first. */
export async function growFilesystemOffline(device: string, signal?: AbortSignal): Promise<void> {
  await tool('e2fsck', ['-f', '-p', device], signal).catch((err) => {
    const exitCode = err instanceof PluginFailure ? err.details.exitCode : undefined;
    if (exitCode !== 1 && exitCode !== 2) throw err;
  });
  await tool('resize2fs', [device], signal);
}
