import { runTool, type ToolResult } from '@dhv/sdk/plugin';

/** Every system tool the plugin runs, with the Debian package that provides it. */
export const TOOL_PACKAGES = {
  'mkfs.ext4': 'e2fsprogs',
  e2fsck: 'e2fsprogs',
  resize2fs: 'e2fsprogs',
  'mkfs.xfs': 'xfsprogs',
  xfs_repair: 'xfsprogs',
  xfs_growfs: 'xfsprogs',
  losetup: 'mount',
  mount: 'mount',
  umount: 'mount',
  fallocate: 'util-linux',
} as const;

export type Tool = keyof typeof TOOL_PACKAGES;

export function tool(name: Tool, args: readonly string[], signal?: AbortSignal): Promise<ToolResult> {
  return runTool(name, args, { signal, debianPackage: TOOL_PACKAGES[name] });
}
