import { existsSync, readdirSync } from 'node:fs';
import { PluginFailure } from '../helpers/errors.js';
import { SYSTEM_DIRS, findTool, runTool, type ToolResult } from '../helpers/system-tools.js';

/** The system tools the host toolkit runs, each with the Debian package that provides it. */
export const HOST_TOOL_PACKAGES = {
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

export type HostTool = keyof typeof HOST_TOOL_PACKAGES;

export interface HostCallOptions {
  signal?: AbortSignal | undefined;
}

/** Runs one of the host tools (no PATH needed; a missing tool names its package). */
export function hostTool(name: HostTool, args: readonly string[], options: HostCallOptions = {}): Promise<ToolResult> {
  return runTool(name, args, {
    debianPackage: HOST_TOOL_PACKAGES[name],
    ...(options.signal ? { signal: options.signal } : {}),
  });
}

/** This host can attach loop devices: /dev/loop-control, or at least one /dev/loopN. */
export function hasLoopSupport(): boolean {
  if (existsSync('/dev/loop-control')) return true;
  try {
    return readdirSync('/dev').some((name) => /^loop[0-9]+$/.test(name));
  } catch {
    return false;
  }
}

export interface HostNeeds {
  /** Named in the messages: `dhv-loopback must run as root ...`. */
  plugin: string;
  /** Refuse unless running as root (default true). */
  root?: boolean;
  /** Refuse unless the host can attach loop devices. */
  loopDevices?: boolean;
  /** Refuse unless every one of these tools is installed; the error names one `apt-get install` line for all that are missing. */
  tools?: readonly HostTool[];
}

/**
 * Says up front, before anything is made, when this host cannot run the plugin: not
 * root (ENOTROOT), no loop devices (ENOLOOP), or tools missing (ETOOLMISSING, with the
 * exact `apt-get install` line).
 */
export function checkHost({ plugin, root = true, loopDevices = false, tools = [] }: HostNeeds): void {
  const uid = process.getuid?.();
  if (root && uid !== 0) {
    throw new PluginFailure(
      'ENOTROOT',
      `${plugin} must run as root to attach loop devices and mount filesystems, but it runs as uid ${uid}; run the Nomad client agent as root`,
      { uid },
    );
  }
  if (loopDevices && !hasLoopSupport()) {
    throw new PluginFailure(
      'ENOLOOP',
      'this host has no loop device support (/dev/loop-control and /dev/loop* are missing); load the loop module (modprobe loop) or, in a container, run privileged with /dev/loop* available',
    );
  }
  const missing = tools.filter((name) => {
    try {
      findTool(name);
      return false;
    } catch {
      return true;
    }
  });
  if (missing.length === 1) findTool(missing[0]!, HOST_TOOL_PACKAGES[missing[0]!]);
  if (missing.length > 1) {
    const packages = [...new Set(missing.map((name) => HOST_TOOL_PACKAGES[name]))];
    throw new PluginFailure(
      'ETOOLMISSING',
      `${missing.join(', ')} were not found in ${SYSTEM_DIRS.join(', ')}; install them (Debian/Ubuntu: apt-get install ${packages.join(' ')})`,
      { tools: missing },
    );
  }
}
