import { readFileSync } from 'node:fs';
import type { Task } from '../../jobs/job-spec.js';

/** The capabilities Nomad's `exec` driver gives a task by default (measured on a 2.0.5 client: thirteen, ambient). */
export const EXEC_DEFAULT_CAPS = [
  'chown',
  'dac_override',
  'fowner',
  'fsetid',
  'kill',
  'setgid',
  'setuid',
  'setpcap',
  'net_bind_service',
  'sys_chroot',
  'mknod',
  'audit_write',
  'setfcap',
] as const;

/**
 * The capabilities an `exec` task gets on a client whose `exec` plugin allows `allowCaps`
 * (`plugin "exec" { config { allow_caps = [...] } }`): the defaults it allows. Without the
 * setting, every default, as on a client no operator hardened.
 */
export function execTaskCaps(allowCaps: readonly string[] | undefined): string[] {
  if (allowCaps === undefined) return [...EXEC_DEFAULT_CAPS];
  const allowed = new Set(allowCaps.map((c) => c.toLowerCase().replace(/^cap_/, '')));
  return EXEC_DEFAULT_CAPS.filter((c) => allowed.has(c));
}

/** A host path bind-mounted into the task at `destination`. */
export interface TaskMount {
  hostPath: string;
  destination: string;
  readOnly: boolean;
}

export interface Account {
  name: string;
  uid: number;
  gid: number;
}

/** The account `name` in /etc/passwd, or undefined. */
export function lookupAccount(name: string): Account | undefined {
  let passwd: string;
  try {
    passwd = readFileSync('/etc/passwd', 'utf8');
  } catch {
    return undefined;
  }
  for (const line of passwd.split('\n')) {
    const [user, , uid, gid] = line.split(':');
    if (user === name || (/^\d+$/.test(name) && uid === name))
      return { name: user!, uid: Number(uid), gid: Number(gid) };
  }
  return undefined;
}

/**
 * Sets up the task's root in its own mount and IPC namespaces (everything it mounts goes when
 * the task's last process does): a tmpfs at the task root, the host's `/usr` and `/etc`
 * read-only and the top-level links into them, `/proc`, a fresh `/tmp`, and a `/dev` of its own
 * as Nomad's exec driver builds it: a tmpfs holding the six device nodes libcontainer allows, a
 * new devpts behind `/dev/ptmx`, a 64 MiB `/dev/shm` (Nomad's default `shm_size`) and the
 * task's mqueue (a bind of the host's `/dev` would share its `/dev/shm` and pin what is mounted
 * below it). Then each volume is bind-mounted at its destination (read-only remounted when
 * asked, so the kernel enforces it); then the root is pivoted there and the host's mounts are
 * detached, so the task holds no other mount (an unmounted loop volume elsewhere is freed while
 * it runs, as under Nomad's exec driver); then the task's user with the driver's capabilities.
 */
const EXEC_SETUP = `set -e
root=$1; n=$2; shift 2
mkdir -p "$root"; mount -t tmpfs -o mode=0755 dhv-task "$root"
for d in usr etc; do mkdir -p "$root/$d"; mount --rbind "/$d" "$root/$d"; mount -o remount,bind,ro "$root/$d"; done
for l in bin sbin lib lib32 lib64 libx32; do
  if [ -L "/$l" ]; then ln -s "$(readlink "/$l")" "$root/$l"
  elif [ -d "/$l" ]; then mkdir -p "$root/$l"; mount --rbind "/$l" "$root/$l"; mount -o remount,bind,ro "$root/$l"; fi
done
mkdir -p "$root/dev" "$root/proc" "$root/tmp"; chmod 1777 "$root/tmp"
dev=$root/dev; mount -t tmpfs -o nosuid,strictatime,mode=0755 dhv-dev "$dev"
node() { mknod -m 0666 "$dev/$1" c "$2" "$3"; }
node null 1 3; node zero 1 5; node full 1 7; node random 1 8; node urandom 1 9; node tty 5 0
mkdir "$dev/pts" "$dev/shm" "$dev/mqueue"
mount -t devpts -o nosuid,noexec,newinstance,ptmxmode=0666,mode=0620,gid=5 devpts "$dev/pts"
ln -s pts/ptmx "$dev/ptmx"
mount -t tmpfs -o nosuid,nodev,noexec,mode=1777,size=64m shm "$dev/shm"
mount -t mqueue -o nosuid,nodev,noexec mqueue "$dev/mqueue"
ln -s /proc/self/fd "$dev/fd"; ln -s /proc/self/fd/0 "$dev/stdin"; ln -s /proc/self/fd/1 "$dev/stdout"; ln -s /proc/self/fd/2 "$dev/stderr"
mount -t proc proc "$root/proc"
while [ "$n" -gt 0 ]; do
  mkdir -p "$root$2"; mount --bind "$1" "$root$2"
  if [ "$3" = ro ]; then mount -o remount,bind,ro "$root$2"; fi
  shift 3; n=$((n-1))
done
uid=$1; gid=$2; user=$3; caps=$4; shift 4
mkdir "$root/.host"; cd "$root"
pivot_root . .host
umount -l /.host; rmdir /.host
exec /usr/bin/setpriv --reuid="$uid" --regid="$gid" --init-groups --inh-caps="$caps" --ambient-caps="$caps" --bounding-set="$caps" -- "$@"
`;

/** The command line of an `exec` task run as root: private mounts, its own root, the task's user and capabilities. */
export function execArgv(
  task: Task,
  root: string,
  mounts: readonly TaskMount[],
  account: Account,
  caps: readonly string[],
): string[] {
  const capList = ['-all', ...caps.map((c) => `+${c}`)].join(',');
  return [
    '/usr/bin/unshare',
    '--mount',
    '--ipc',
    '--propagation',
    'private',
    '--',
    '/bin/sh',
    '-c',
    EXEC_SETUP,
    'dhv-exec',
    root,
    String(mounts.length),
    ...mounts.flatMap((m) => [m.hostPath, m.destination, m.readOnly ? 'ro' : 'rw']),
    String(account.uid),
    String(account.gid),
    account.name,
    capList,
    task.Config.command ?? '',
    ...(task.Config.args ?? []),
  ];
}

/** A task run as it is, on the host (`raw_exec`, or `exec` without root): as another user only when dhv is root. */
export function hostArgv(task: Task, account: Account | undefined): string[] {
  const command = [task.Config.command ?? '', ...(task.Config.args ?? [])];
  if (!account) return command;
  return ['/usr/bin/setpriv', `--reuid=${account.uid}`, `--regid=${account.gid}`, '--init-groups', '--', ...command];
}
