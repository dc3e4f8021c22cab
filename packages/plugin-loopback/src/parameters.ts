import { param, parameterSchema, type Parameters } from '@dhv/sdk/plugin';

export const FILESYSTEMS = ['ext4', 'xfs'] as const;
export type FilesystemType = (typeof FILESYSTEMS)[number];

/** Mount options a volume spec may ask for; anything else could weaken the host (`suid`, `dev`) or break the plugin. */
export const MOUNT_OPTIONS = ['noexec', 'nosuid', 'nodev', 'noatime', 'ro'] as const;
export type MountOption = (typeof MOUNT_OPTIONS)[number];

/**
 * The volume spec's parameters, declared once. `fs` is not `fixed` here: create reads the
 * filesystem the image really holds and refuses a different one itself, which also covers
 * an image made before any parameters were remembered.
 */
const PARAMETERS = parameterSchema({
  fs: param.choice(FILESYSTEMS, { default: 'ext4' }),
  /** Mode of the filesystem's root directory, set when the filesystem is made. */
  mode: param.mkdirMode(),
  uid: param.mkdirOwner('uid'),
  gid: param.mkdirOwner('gid'),
  mount_options: param.listOf(MOUNT_OPTIONS),
  /** Reserve every block of the image up front (fallocate) instead of leaving it sparse. */
  preallocate: param.flag(),
});

export interface LoopbackParameters {
  fs: FilesystemType;
  mode: number;
  uid: number | undefined;
  gid: number | undefined;
  mountOptions: MountOption[];
  preallocate: boolean;
}

/** Reads the volume spec's parameters; every problem is reported in one error, each naming its parameter. */
export function parseParameters(parameters: Parameters | null): LoopbackParameters {
  const { mount_options: mountOptions, ...rest } = PARAMETERS.read(parameters);
  return { ...rest, mountOptions };
}
