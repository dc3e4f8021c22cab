import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PluginCall } from './real-agent.js';

/**
 * A recorder put in front of a plugin: a /bin/sh script that forks as little as it can (a node
 * one took long enough to start that recorder and plugin missed the fingerprint's 1 s deadline on
 * a loaded machine). Each call gets its own folder in the log folder, numbered in the order the
 * calls started (a number is claimed by creating `.<n>` exclusively), holding `plugin`, `argv`
 * (NUL-separated), `env` (the environment exactly as received, NUL-separated), `stdout`,
 * `stderr` and `exit` (written last). The plugin is run with the recorder's argv, stdin and
 * environment; its stdout and stderr are written out again once it exits, and the recorder exits
 * with its status. A TERM or INT the recorder gets is passed on to the plugin. A recorder that
 * cannot write its log runs the plugin in its place.
 */
export function recorderScript(plugin: string, real: string, logDir: string): string {
  const [install, cat, env, grep] = ['install', 'cat', 'env', 'grep'].map(tool);
  return `#!/bin/sh
real=${sh(real)}
log=${sh(logDir)}
set -C
n=1
until printf '' 2>/dev/null >"$log/.$n"; do
  [ -e "$log/.$n" ] || exec "$real" "$@"
  n=$((n + 1))
done
set +C
d=$log/$n
${install} -D -m 644 /proc/$$/environ "$d/env" 2>/dev/null || exec "$real" "$@"
if [ $# -gt 0 ]; then printf '%s\\0' "$@"; fi >"$d/argv"
printf '%s' ${sh(plugin)} >"$d/plugin"
# dash exports PWD to every child: the plugin gets it only if the recorder did (the read
# builtin drops NULs, so only text holding PWD= anywhere needs a closer look).
unset_pwd=-uPWD
while IFS= read -r line || [ -n "$line" ]; do
  case $line in *PWD=*) ${grep} -qz '^PWD=' "$d/env" && unset_pwd=; break ;; esac
done <"$d/env"
# An asynchronous command starts with INT and QUIT ignored: give the plugin back the
# dispositions the recorder received.
while IFS=': 	' read -r key mask; do [ "$key" = SigIgn ] && break; done </proc/$$/status
mask=\${mask:-0}
defaults=
[ $((0x$mask & 2)) = 0 ] && defaults=INT
[ $((0x$mask & 4)) = 0 ] && defaults=\${defaults:+$defaults,}QUIT
pid=
pending=
trap '[ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null || pending=TERM' TERM
trap '[ -n "$pid" ] && kill -INT "$pid" 2>/dev/null || pending=INT' INT
exec 3<&0
${env} $unset_pwd \${defaults:+--default-signal=$defaults} "$real" "$@" <&3 3<&- >"$d/stdout" 2>"$d/stderr" &
pid=$!
exec 3<&-
[ -n "$pending" ] && kill -"$pending" "$pid" 2>/dev/null
# A trapped signal ends a wait early: wait again while the plugin is there.
while :; do
  wait "$pid"
  code=$?
  kill -0 "$pid" 2>/dev/null || break
done
[ -s "$d/stdout" ] && ${cat} "$d/stdout"
[ -s "$d/stderr" ] && ${cat} "$d/stderr" >&2
printf '%s\\n' "$code" >"$d/exit"
exit "$code"
`;
}

/** A call as the vectors hold one (`exit` null when the recorder did not finish: killed with its plugin). */
export interface RecordedCall extends PluginCall {
  /** The folder's name: the call's number, in the order the calls started. */
  folder: string;
}

/** The calls recorded in `logDir` whose folders are not in `seen`, in the order they started. */
export function readRecordedCalls(logDir: string, seen: ReadonlySet<string> = new Set()): RecordedCall[] {
  return recordedFolders(logDir)
    .filter((f) => !seen.has(f))
    .map((folder) => {
      const read = (name: string) => {
        const file = join(logDir, folder, name);
        return existsSync(file) ? readFileSync(file, 'utf8') : '';
      };
      const exit = read('exit').trim();
      return {
        folder,
        plugin: read('plugin'),
        argv: nulSeparated(read('argv')),
        env: Object.fromEntries(
          nulSeparated(read('env')).map((kv) => {
            const eq = kv.indexOf('=');
            return eq < 0 ? [kv, ''] : [kv.slice(0, eq), kv.slice(eq + 1)];
          }),
        ),
        exit: exit === '' ? null : Number(exit),
        stdout: read('stdout'),
        stderr: read('stderr'),
      };
    });
}

/** The call folders in `logDir`, in the order the calls started. */
export function recordedFolders(logDir: string): string[] {
  return readdirSync(logDir)
    .filter((f) => /^\d+$/.test(f))
    .sort((a, b) => Number(a) - Number(b));
}

function nulSeparated(text: string): string[] {
  return text === '' ? [] : text.replace(/\0$/, '').split('\0');
}

/** Single-quoted for /bin/sh. */
function sh(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/** The absolute path of a Debian base tool: the recorder must not depend on the PATH a plugin gets (none, from Nomad). */
function tool(name: string): string {
  const found = ['/usr/bin', '/bin'].map((d) => join(d, name)).find((p) => existsSync(p));
  if (found === undefined) throw new Error(`${name} not found in /usr/bin or /bin: apt-get install coreutils grep`);
  return found;
}
