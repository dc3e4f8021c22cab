import { shellQuote } from '../helpers/shell-quote.js';

export interface LoopCopiesToDrop {
  /** Mounts at or below these stay (the caller's own volumes, which it goes on using in the namespace). */
  keep: readonly string[];
  /** Only copies at or below these are dropped (every loop mount when not given). */
  under?: readonly string[];
  /** umount and sed by absolute path: the script may run with no PATH. */
  tools: { umount: string; sed: string };
}

/**
 * Shell text, run first in a new mount namespace, that drops the namespace's copies of
 * loop-device mounts. A new mount namespace starts with a copy of every mount on the
 * machine, among them the loop-mounted volumes of every plugin on it, and while a copy lives,
 * a delete that checks for them (dhv-loopback's: "also mounted ... in the mount namespace of
 * process N") rightly refuses: a namespace of dhv's own, kept for seconds, would block the
 * host's deletes. The copies go at once: mountinfo read with builtins only, then one umount
 * for all of them (a delete tolerates a copy for NAMESPACE_SETUP_GRACE_MS). A function, so
 * that `set --` leaves the script's own "$0", "$1"... alone.
 */
export function dropLoopMountCopies({ keep, under, tools }: LoopCopiesToDrop): string {
  const kept = keep.flatMap((path) => [shellQuote(path), `${shellQuote(path)}/*`]).join('|');
  const dropped =
    under === undefined ? '*' : under.flatMap((path) => [shellQuote(path), `${shellQuote(path)}/*`]).join('|');
  return [
    'dhv_drop_loop_mount_copies() {',
    '  set -f',
    '  set --',
    // mountinfo: <id> <parent> <dev> <root> <mount point> <options> [optional...] - <type> <source> <super options>
    '  while read -r _ _ _ _ m rest; do',
    '    after=${rest#* - }',
    '    [ "$after" != "$rest" ] || continue',
    '    source=${after#* }',
    '    case ${source%% *} in /dev/loop*) ;; *) continue ;; esac',
    // The mount point is octal-escaped (\040 for a space); printf's %b reads octal only as \0nnn.
    String.raw`    case $m in *\\*) m=$(printf '%b' "$(printf '%s' "$m" | ${tools.sed} 's/\\\([0-7]\{3\}\)/\\0\1/g')") ;; esac`,
    `    case "$m" in ${kept ? `${kept}) ;;` : ''} ${dropped}) set -- "$@" "$m" ;; esac`,
    '  done < /proc/self/mountinfo',
    '  set +f',
    `  [ $# -eq 0 ] || ${tools.umount} -l "$@" 2>/dev/null || true`,
    '}',
    'dhv_drop_loop_mount_copies',
  ].join('\n');
}
