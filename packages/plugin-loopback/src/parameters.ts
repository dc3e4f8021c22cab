import {
  DEFAULT_VOLUME_MODE,
  PluginFailure,
  parseModeParameter,
  parseOwnerParameter,
  type Parameters,
} from '@dhv/sdk/plugin';
import { FILESYSTEMS, type FilesystemType } from '@dhv/sdk/host';

/** Mount options a volume spec may ask for; anything else could weaken the host (`suid`, `dev`) or break the plugin. */
export const MOUNT_OPTIONS = ['noexec', 'nosuid', 'nodev', 'noatime', 'ro'] as const;
export type MountOption = (typeof MOUNT_OPTIONS)[number];

export interface LoopbackParameters {
  fs: FilesystemType;
  /** Mode of the filesystem's root directory, set when the filesystem is made. */
  mode: number;
  uid: number | undefined;
  gid: number | undefined;
  mountOptions: MountOption[];
  /** Reserve every block of the image up front (fallocate) instead of leaving it sparse. */
  preallocate: boolean;
}

export const PARAMETER_NAMES = ['fs', 'mode', 'uid', 'gid', 'mount_options', 'preallocate'] as const;

/** Reads the volume spec's parameters; every problem is reported in one error, each naming its parameter. */
export function parseParameters(parameters: Parameters | null): LoopbackParameters {
  const given = parameters ?? {};
  const problems: string[] = [];
  const result: LoopbackParameters = {
    fs: 'ext4',
    mode: DEFAULT_VOLUME_MODE,
    uid: undefined,
    gid: undefined,
    mountOptions: [],
    preallocate: false,
  };

  const unknown = Object.keys(given).filter((key) => !(PARAMETER_NAMES as readonly string[]).includes(key));
  for (const key of unknown)
    problems.push(`unknown parameter ${JSON.stringify(key)} (known: ${PARAMETER_NAMES.join(', ')})`);

  if (given.fs !== undefined) {
    if ((FILESYSTEMS as readonly string[]).includes(given.fs)) result.fs = given.fs as FilesystemType;
    else problems.push(`fs must be one of ${FILESYSTEMS.join(', ')}, got ${JSON.stringify(given.fs)}`);
  }
  if (given.mode !== undefined) {
    const mode = parseModeParameter(given.mode);
    if (mode.ok) result.mode = mode.value;
    else problems.push(mode.problem);
  }
  for (const name of ['uid', 'gid'] as const) {
    if (given[name] === undefined) continue;
    const id = parseOwnerParameter(name, given[name]);
    if (id.ok) result[name] = id.value;
    else problems.push(id.problem);
  }
  if (given.mount_options !== undefined) {
    for (const option of given.mount_options
      .split(',')
      .map((o) => o.trim())
      .filter((o) => o !== '')) {
      if (!(MOUNT_OPTIONS as readonly string[]).includes(option)) {
        problems.push(`mount_options: ${JSON.stringify(option)} is not allowed (allowed: ${MOUNT_OPTIONS.join(', ')})`);
      } else if (!result.mountOptions.includes(option as MountOption)) {
        result.mountOptions.push(option as MountOption);
      }
    }
  }
  if (given.preallocate !== undefined) {
    if (given.preallocate === 'true' || given.preallocate === 'false')
      result.preallocate = given.preallocate === 'true';
    else problems.push(`preallocate must be "true" or "false", got ${JSON.stringify(given.preallocate)}`);
  }

  if (problems.length > 0) {
    throw new PluginFailure('EINVALIDPARAMETER', `invalid parameters: ${problems.join('; ')}`, { problems });
  }
  return result;
}
