import { checkHost, type FilesystemType, type HostTool } from '@dhv/sdk/host';
import { PLUGIN_NAME } from './version.js';

const COMMON_TOOLS: HostTool[] = ['losetup', 'mount', 'umount'];
const FS_TOOLS: Record<FilesystemType, HostTool[]> = {
  ext4: ['mkfs.ext4', 'e2fsck', 'resize2fs'],
  xfs: ['mkfs.xfs', 'xfs_repair', 'xfs_growfs'],
};

/**
 * Says up front, before anything is made, when this host cannot run a create of this
 * filesystem (or, with none, a delete): not root, no loop devices, or a tool missing.
 */
export function checkHostFor(fs: FilesystemType | undefined, preallocate = false): void {
  const tools = [...COMMON_TOOLS, ...(fs ? FS_TOOLS[fs] : []), ...(preallocate ? (['fallocate'] as HostTool[]) : [])];
  checkHost({ plugin: PLUGIN_NAME, loopDevices: true, tools });
}

/** Only the root check: a permission error as another user says "needs root", not EACCES. */
export function checkRoot(): void {
  checkHost({ plugin: PLUGIN_NAME });
}
