import { realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dropLoopMountCopies } from '@dhv/sdk/host';

const UNSHARE = '/usr/bin/unshare';
const TOOLS = { umount: '/usr/bin/umount', sed: '/usr/bin/sed' };

/** Where the suite, and any other copy of it, makes its volumes. */
const TEMP_ROOTS = [...new Set(['/tmp', '/var/tmp', realpathSync(tmpdir())])];

/**
 * argv that runs the shell `script` (with `args` as `$0`, `$1`, ...) in a private mount
 * namespace that disappears with the process, after the namespace has dropped its copies
 * of loop mounts in the temp folders, other tests' volumes (dropLoopMountCopies says why).
 * Mounts under `keep` stay.
 */
export function inPrivateMountNamespace(
  script: string,
  args: readonly string[] = [],
  keep: readonly string[] = [],
): [string, string[]] {
  return [
    UNSHARE,
    [
      '--mount',
      '--propagation',
      'private',
      '/bin/sh',
      '-c',
      `${dropLoopMountCopies({ keep, under: TEMP_ROOTS, tools: TOOLS })}\n${script}`,
      ...args,
    ],
  ];
}
