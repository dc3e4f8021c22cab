import { realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';

const UNSHARE = '/usr/bin/unshare';

/** Where the suite, and any other copy of it, makes its volumes. */
const TEMP_ROOTS = [...new Set(['/tmp', '/var/tmp', realpathSync(tmpdir())])];

const quote = (text: string) => `'${text.replaceAll("'", "'\\''")}'`;

/**
 * A new mount namespace starts with a copy of every mount on the machine, among them the
 * loop-mounted volumes another copy of the suite has in its temp folders at that instant.
 * While the copy lives, dhv-loopback rightly refuses to delete such a volume ("also
 * mounted ... in the mount namespace of process N"). So the namespace first drops its
 * copies of loop mounts under the temp folders, except those under `keep` (the test's own).
 */
function dropForeignLoopMounts(keep: readonly string[]): string {
  const kept = keep.flatMap((path) => [quote(path), `${quote(path)}/*`]).join('|');
  const temp = TEMP_ROOTS.map((path) => `${quote(path)}/*`).join('|');
  return [
    'set -f',
    // mountinfo: ... <mount point> ... - <type> <source> ...; the mount point is octal-escaped.
    `for m in $(/usr/bin/awk '{ for (i = 7; $i != "-"; i++); if ($(i + 2) ~ /^\\/dev\\/loop/) print $5 }' /proc/self/mountinfo); do`,
    `  m=$(printf '%b' "$m")`,
    `  case "$m" in ${kept ? `${kept}) ;;` : ''} ${temp}) /usr/bin/umount -l "$m" 2>/dev/null || true ;; esac`,
    'done',
    'set +f',
  ].join('\n');
}

/**
 * argv that runs the shell `script` (with `args` as `$0`, `$1`, ...) in a private mount
 * namespace that disappears with the process, after the namespace has dropped the copies
 * of other tests' loop mounts (see above). Mounts under `keep` stay.
 */
export function inPrivateMountNamespace(
  script: string,
  args: readonly string[] = [],
  keep: readonly string[] = [],
): [string, string[]] {
  return [
    UNSHARE,
    ['--mount', '--propagation', 'private', '/bin/sh', '-c', `${dropForeignLoopMounts(keep)}\n${script}`, ...args],
  ];
}
