import { existsSync, readdirSync } from 'node:fs';
import { PluginFailure, findTool } from '@dhv/sdk/plugin';
import type { FilesystemType } from './parameters.js';
import { TOOL_PACKAGES, type Tool } from './tools.js';

const COMMON_TOOLS: Tool[] = ['losetup', 'mount', 'umount'];
const FS_TOOLS: Record<FilesystemType, Tool[]> = {
  ext4: ['mkfs.ext4', 'e2fsck', 'resize2fs'],
  xfs: ['mkfs.xfs', 'xfs_repair', 'xfs_growfs'],
};

function hasLoopDevices(): boolean {
  if (existsSync('/dev/loop-control')) return true;
  try {
    return readdirSync('/dev').some((name) => /^loop[0-9]+$/.test(name));
  } catch {
    return false;
  }
}

/** The tools a create of this filesystem may run; delete needs only the first three. */
export function toolsFor(fs: FilesystemType | undefined, preallocate = false): Tool[] {
  return [...COMMON_TOOLS, ...(fs ? FS_TOOLS[fs] : []), ...(preallocate ? (['fallocate'] as Tool[]) : [])];
}

/**
 * Says up front, before anything is made, when this host cannot run the plugin: not
 * root, no loop devices, or a tool missing (naming its Debian package).
 */
export function checkHost(tools: readonly Tool[]): void {
  const uid = process.getuid?.();
  if (uid !== 0) {
    throw new PluginFailure(
      'ENOTROOT',
      `dhv-loopback must run as root to attach loop devices and mount filesystems, but it runs as uid ${uid}; run the Nomad client agent as root`,
      { uid },
    );
  }
  if (!hasLoopDevices()) {
    throw new PluginFailure(
      'ENOLOOP',
      'this host has no loop device support (/dev/loop-control and /dev/loop* are missing); load the loop module (modprobe loop) or, in a container, run privileged with /dev/loop* available',
    );
  }
  for (const name of tools) findTool(name, TOOL_PACKAGES[name]);
}
