import { normalize, sep } from 'node:path';
import { findTool, TOOL_ENV } from './system-tools.js';

export interface DiskSpace {
  /** Bytes an unprivileged writer may still use. */
  free: bigint;
  size: bigint;
}

/**
 * Free space on the filesystem holding `path` (or its closest existing parent), through
 * check-disk-space. Its `df` is found without PATH, since plugins have none.
 */
export async function diskSpace(path: string): Promise<DiskSpace> {
  // Loaded on first use, like everything here that fingerprint does not need.
  const [module, { execFile }, { access }, { release }] = await Promise.all([
    import('check-disk-space'),
    import('node:child_process'),
    import('node:fs/promises'),
    import('node:os'),
  ]);
  // The package's types describe CommonJS, its ESM build has a plain default export.
  const checkDiskSpace = ((module.default as { default?: unknown }).default ?? module.default) as unknown as typeof module.default.default;
  const result = await checkDiskSpace(path, {
    platform: process.platform,
    release: release(),
    fsAccess: access,
    pathNormalize: normalize,
    pathSep: sep,
    cpExecFile: (file: string, args: ReadonlyArray<string> | null | undefined, options: { windowsHide: true }) =>
      new Promise<{ stdout: string; stderr: string }>((resolve, reject) =>
        execFile(findTool(file, 'coreutils'), [...(args ?? [])], { ...options, env: TOOL_ENV, encoding: 'utf8' }, (err, stdout, stderr) =>
          err ? reject(err) : resolve({ stdout, stderr }),
        ),
      ),
  });
  return { free: BigInt(result.free), size: BigInt(result.size) };
}
