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
 *
 * Until it has, the copies are there: a delete by the other suite in that window is refused
 * (two suites side by side saw it once in 50 create/delete cycles at load 25, when the drop
 * ran awk and one umount per mount). So the window is as short as the shell can make it:
 * mountinfo read with builtins only, then one umount for every copy. A function, so that
 * `set --` leaves the script's own "$0", "$1"... alone.
 */
function dropForeignLoopMounts(keep: readonly string[]): string {
  const kept = keep.flatMap((path) => [quote(path), `${quote(path)}/*`]).join('|');
  const temp = TEMP_ROOTS.map((path) => `${quote(path)}/*`).join('|');
  return [
    'dhv_drop_foreign_loop_mounts() {',
    '  set -f',
    '  set --',
    // mountinfo: <id> <parent> <dev> <root> <mount point> <options> [optional...] - <type> <source> <super options>
    '  while read -r _ _ _ _ m rest; do',
    '    after=${rest#* - }',
    '    [ "$after" != "$rest" ] || continue',
    '    source=${after#* }',
    '    case ${source%% *} in /dev/loop*) ;; *) continue ;; esac',
    // The mount point is octal-escaped (\040 for a space); printf's %b reads octal only as \0nnn.
    String.raw`    case $m in *\\*) m=$(printf '%b' "$(printf '%s' "$m" | /usr/bin/sed 's/\\\([0-7]\{3\}\)/\\0\1/g')") ;; esac`,
    `    case "$m" in ${kept ? `${kept}) ;;` : ''} ${temp}) set -- "$@" "$m" ;; esac`,
    '  done < /proc/self/mountinfo',
    '  set +f',
    '  [ $# -eq 0 ] || /usr/bin/umount -l "$@" 2>/dev/null || true',
    '}',
    'dhv_drop_foreign_loop_mounts',
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
