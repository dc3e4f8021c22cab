import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { taskOf } from '../../../../../test/support/job-fixtures.js';
import { EXEC_DEFAULT_CAPS, execArgv, hostArgv, lookupAccount } from './task-launch.js';

/** How a task's command line is built: the `exec` driver's isolation as root, or the host as it is. */

const task = taskOf({ Driver: 'exec', Config: { command: '/bin/sh', args: ['-c', 'id -u'] } });

describe('accounts, as the exec driver looks its user up', () => {
  it('finds a user by name or by UID in /etc/passwd, and nothing for a name that is not there', () => {
    const nobody = Number(execFileSync('/usr/bin/id', ['-u', 'nobody'], { encoding: 'utf8' }));
    expect(lookupAccount('root')).toEqual({ name: 'root', uid: 0, gid: 0 });
    expect(lookupAccount('0')).toEqual({ name: 'root', uid: 0, gid: 0 });
    expect(lookupAccount('nobody')).toMatchObject({ name: 'nobody', uid: nobody });
    expect(lookupAccount('no-such-user-dhv')).toBeUndefined();
  });
});

describe("an exec task's command line", () => {
  const mounts = [
    { hostPath: '/v/a', destination: '/srv/a', readOnly: false },
    { hostPath: '/v/b', destination: '/srv/b', readOnly: true },
  ];
  const argv = execArgv(task, '/alloc/t', mounts, { name: 'nobody', uid: 65534, gid: 65534 }, EXEC_DEFAULT_CAPS);

  it('runs the setup in a private mount namespace, then the task as its user with only the driver’s capabilities', () => {
    expect(argv.slice(0, 8)).toEqual([
      '/usr/bin/unshare',
      '--mount',
      '--ipc',
      '--propagation',
      'private',
      '--',
      '/bin/sh',
      '-c',
    ]);
    expect(argv.slice(9)).toEqual([
      'dhv-exec',
      '/alloc/t',
      '2',
      ...['/v/a', '/srv/a', 'rw'],
      ...['/v/b', '/srv/b', 'ro'],
      '65534',
      '65534',
      'nobody',
      `-all,${EXEC_DEFAULT_CAPS.map((c) => `+${c}`).join(',')}`,
      '/bin/sh',
      '-c',
      'id -u',
    ]);
    // setpriv's syntax: every capability dropped, then the driver's added back.
    expect(execArgv(task, '/r', [], { name: 'x', uid: 1, gid: 1 }, [])).toContain('-all');
  });

  it('has a setup script the shell parses, which remounts a read-only volume read-only and pivots the root', () => {
    const script = argv[8]!;
    expect(() => execFileSync('/bin/sh', ['-n', '-c', script])).not.toThrow();
    expect(script).toContain('if [ "$3" = ro ]; then mount -o remount,bind,ro "$root$2"; fi');
    expect(script).toContain('pivot_root . .host');
    // The task's /dev is built, never bound from the host's (whose /dev/shm and what is below it it would share).
    expect(script).not.toMatch(/mount --r?bind \/dev\b/);
    expect(script).toMatch(/exec \/usr\/bin\/setpriv --reuid="\$uid" --regid="\$gid" --init-groups .* -- "\$@"\n$/);
  });
});

describe('a task run on the host (raw_exec, or exec without root)', () => {
  it('is its command as it is, or the same under setpriv as another user when dhv is root', () => {
    expect(hostArgv(task, undefined)).toEqual(['/bin/sh', '-c', 'id -u']);
    expect(hostArgv(task, { name: 'nobody', uid: 65534, gid: 65533 })).toEqual([
      '/usr/bin/setpriv',
      '--reuid=65534',
      '--regid=65533',
      '--init-groups',
      '--',
      '/bin/sh',
      '-c',
      'id -u',
    ]);
    expect(hostArgv({ ...task, Config: {} }, undefined)).toEqual(['']);
  });
});
