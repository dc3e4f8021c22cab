/** A bash plugin whose answers are awkward to pass on: bytes that are not UTF-8, exit 3, death by a signal. */
export const BASH_PLUGIN = (version: string, deleteExit: number) => `#!/bin/bash
case "$1" in
  fingerprint) printf '{"version": "${version}"}\\n' ;;
  create)
    /bin/mkdir -p "$DHV_VOLUMES_DIR/$DHV_VOLUME_ID"
    printf 'raw \\377\\376 bytes\\n' >&2
    printf '{"path": "%s/%s", "bytes": 1048576}' "$DHV_VOLUMES_DIR" "$DHV_VOLUME_ID" ;;
  delete) echo "cannot delete $DHV_VOLUME_ID" >&2; exit ${deleteExit} ;;
  die) kill -TERM $$ ;;
  wait)
    trap 'echo "got TERM" >> "$DHV_VOLUMES_DIR/signals"; kill $! 2>/dev/null; exit 7' TERM
    read -t 60 _ < "$DHV_VOLUMES_DIR/gate" >/dev/null 2>&1 &
    echo $$ > "$DHV_VOLUMES_DIR/pid"
    wait $! ;;
esac
`;
