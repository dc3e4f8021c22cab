import { afterEach, describe, expect, it } from 'vitest';
import { execFileSync, spawn } from 'node:child_process';
import { chmod, copyFile, readdir, symlink } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { discoverPlugins } from './discover-plugins.js';
import { execPlugin } from './exec-plugin.js';
import { PluginError } from './errors.js';
import { usePluginDirs, type PluginDir } from '../__fixtures__/plugins.js';
import { signalProcessGroup } from '../helpers/signals.js';
import { groupGone } from '../../../../test/support/processes.js';
import { root, skipUnless, tool, toolPath } from '../../../../test/support/kit.js';

/**
 * Entries of the plugin dir that are not
 * programs can neither hang nor break discovery, odd requests fail with a clear error,
 * and the file checked is the file run.
 */

const VOLUME_ID = '5b8a2a5e-8f0a-4c8e-9a4f-0c7d3f2b1a99';
const request = { volumesDir: '/srv/volumes', volumeName: 'data', volumeId: VOLUME_ID, nodeId: 'node-1' };

let dir: PluginDir;
let outside: PluginDir;
usePluginDirs((d, o) => {
  dir = d;
  outside = o;
});

async function failure(promise: Promise<unknown>): Promise<PluginError> {
  const err = await promise.then(
    () => new Error('expected a failure'),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(PluginError);
  return err as PluginError;
}

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** A UNIX socket file, kept listening until the test ends (closing removes it). */
async function makeSocket(path: string): Promise<void> {
  const server = createServer();
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(path, resolve));
}

describe('an entry of the plugin dir that is not a program, with an execute bit', () => {
  const kinds = [
    [
      'a FIFO',
      /is a FIFO \(named pipe\), not a program/,
      async (path: string) => execFileSync('/usr/bin/mkfifo', [path]),
    ],
    ['a socket', /is a socket, not a program/, makeSocket],
  ] as const;

  it.each(kinds)(
    '%s never hangs discovery: it is skipped with its reason within the budget, the others found',
    async (_kind, says, make) => {
      await make(dir.join('odd'));
      await chmod(dir.join('odd'), 0o755);
      await dir.bash('good', `echo '{"version": "1"}'`);
      const started = performance.now();
      const discovery = await discoverPlugins(dir.path, { timeoutMs: 5_000 });
      expect(performance.now() - started).toBeLessThan(5_000);
      expect(discovery.plugins.map((p) => p.id)).toEqual(['good']);
      const odd = discovery.skipped.find((s) => s.id === 'odd')!;
      // execve's own verdict first, then what it is; never "chmod +x it".
      expect(odd.reason).toMatch(
        new RegExp(`^error fingerprinting plugin "odd": fork/exec ${dir.join('odd')}: permission denied\\n`),
      );
      expect(odd.reason).toMatch(says);
      expect(odd.reason).not.toMatch(/chmod/);
    },
  );

  it.each(kinds)('%s as a create fails at once with the reason', async (_kind, says, make) => {
    await make(dir.join('odd'));
    await chmod(dir.join('odd'), 0o755);
    const err = await failure(execPlugin({ pluginDir: dir.path, pluginId: 'odd' }, 'create', request));
    expect(err.code).toBe('PLUGIN_NOT_EXECUTABLE');
    expect(err.message).toMatch(says);
  });
});

describe.skipIf(skipUnless('a character device in the plugin dir', root(), tool('mknod', 'coreutils')))(
  'a character device with an execute bit',
  () => {
    it('is skipped at discovery with its reason, never opened, and a create with it fails at once', async () => {
      execFileSync(toolPath('mknod')!, [dir.join('tty'), 'c', '1', '3']);
      await chmod(dir.join('tty'), 0o755);
      await dir.bash('good', `echo '{"version": "1"}'`);
      const discovery = await discoverPlugins(dir.path, { timeoutMs: 5_000 });
      expect(discovery.plugins.map((p) => p.id)).toEqual(['good']);
      const reason = discovery.skipped.find((s) => s.id === 'tty')!.reason;
      expect(reason).toMatch(/permission denied\n.*is a character device/);
      expect(reason).not.toMatch(/chmod/);
      const err = await failure(execPlugin({ pluginDir: dir.path, pluginId: 'tty' }, 'create', request));
      expect(err.code).toBe('PLUGIN_NOT_EXECUTABLE');
    });
  },
);

describe('a script whose #! line names itself (spawn ELOOP)', () => {
  it('is skipped with its reason and never breaks discovery for the others', async () => {
    const sb = dir.join('sb');
    await dir.file('sb', `#!${sb}\n`, 0o755);
    await dir.bash('good', `echo '{"version": "1"}'`);
    const discovery = await discoverPlugins(dir.path, { timeoutMs: 5_000 });
    expect(discovery.plugins.map((p) => p.id)).toEqual(['good']);
    expect(discovery.skipped.find((s) => s.id === 'sb')!.reason).toMatch(
      new RegExp(`^error fingerprinting plugin "sb": fork/exec ${sb}: too many levels of symbolic links\\n.*#! line`),
    );
    const err = await failure(execPlugin({ pluginDir: dir.path, pluginId: 'sb' }, 'create', request));
    expect(err.code).toBe('PLUGIN_SPAWN_FAILED');
  });
});

describe('a request the kernel cannot pass to a plugin', () => {
  it("a name beyond Linux's limit for one variable (E2BIG) fails naming the variable and the limit", async () => {
    await dir.bash('p', `echo '{"path": "/x"}'`);
    const err = await failure(
      execPlugin({ pluginDir: dir.path, pluginId: 'p' }, 'create', { ...request, volumeName: 'n'.repeat(200_000) }),
    );
    expect(err.nomadMessage).toBe(
      `error creating volume "${VOLUME_ID}" with plugin "p": fork/exec ${dir.join('p')}: argument list too long`,
    );
    expect(err.message).toMatch(
      /\nDHV_VOLUME_NAME is 200017 bytes: Linux passes at most 131072 bytes \(MAX_ARG_STRLEN\)/,
    );
  });

  it('parameters beyond that limit, the same', async () => {
    await dir.bash('p', `echo '{"path": "/x"}'`);
    const err = await failure(
      execPlugin({ pluginDir: dir.path, pluginId: 'p' }, 'create', {
        ...request,
        parameters: { big: 'x'.repeat(1_000_000) },
      }),
    );
    expect(err.message).toMatch(/argument list too long\nDHV_PARAMETERS is [0-9]+ bytes: Linux passes at most 131072/);
  });

  it('a NUL in a name fails as Go fails it (invalid argument), saying which variable', async () => {
    await dir.bash('p', `echo '{"path": "/x"}'`);
    const err = await failure(
      execPlugin({ pluginDir: dir.path, pluginId: 'p' }, 'create', { ...request, volumeName: 'a\0b' }),
    );
    expect(err.message).toBe(
      `error creating volume "${VOLUME_ID}" with plugin "p": fork/exec ${dir.join('p')}: invalid argument\nDHV_VOLUME_NAME contains a NUL byte, which no environment variable can carry`,
    );
  });
});

describe('a file that begins like an ELF program but is not one', () => {
  it('is refused as execve refuses it (exec format error), never run through /bin/sh', async () => {
    const marker = outside.join('ran');
    // ELF magic, then a shell command /bin/sh would happily run.
    await dir.file('elf', `\x7fELF\n/usr/bin/touch ${marker}\n`, 0o755);
    const err = await failure(execPlugin({ pluginDir: dir.path, pluginId: 'elf' }, 'create', request));
    expect(err.nomadMessage).toBe(
      `error creating volume "${VOLUME_ID}" with plugin "elf": fork/exec ${dir.join('elf')}: exec format error`,
    );
    expect(err.message).toMatch(/begins like an ELF program but/);
    expect(await readdir(outside.path)).toEqual([]);
  });
});

describe('when many fingerprints start at once and one times out', () => {
  it('says the machine was loaded', async () => {
    for (let i = 0; i < 12; i++) await dir.bash(`p${i}`, `echo '{"version": "1"}'`);
    await dir.bash('slow', '/usr/bin/sleep 5');
    const discovery = await discoverPlugins(dir.path, { timeoutMs: 1_000 });
    expect(discovery.skipped.find((s) => s.id === 'slow')!.reason).toMatch(
      /13 fingerprints started at once on [0-9]+ CPUs: the machine was loaded/,
    );
  });
});

describe('the file checked is the file run', () => {
  it('swapping a plugin between a program and a symlink to an outside script never runs the outside script', async () => {
    const marker = outside.join('outside-ran');
    const evil = await outside.bash('evil', `/usr/bin/touch ${marker}; echo '{"path": "/x"}'`);
    // The program inside: a copy of an ELF binary, which is run from the very descriptor checked.
    await copyFile('/bin/true', dir.join('real'));
    await chmod(dir.join('real'), 0o755);
    await symlink(evil, dir.join('link'));
    const swapper = spawn(
      '/bin/sh',
      [
        '-c',
        `cd ${dir.path}; while :; do /bin/ln -f real x.file; /bin/mv -f x.file x; /bin/ln -sfn ${evil} x.link; /bin/mv -f x.link x; done`,
      ],
      { stdio: 'ignore', detached: true },
    );
    const swapperPgid = swapper.pid!;
    let insideRuns = 0;
    let refused = 0;
    try {
      const until = performance.now() + 3_000;
      while (performance.now() < until) {
        const err = await failure(execPlugin({ pluginDir: dir.path, pluginId: 'x' }, 'create', request));
        if (err.nomadMessage === 'unexpected end of JSON input')
          insideRuns++; // /bin/true ran: empty stdout
        else if (err.code === 'PLUGIN_NOT_FOUND')
          refused++; // the symlink was in place at the check
        else throw err;
      }
    } finally {
      // The whole group, and only once it is gone: an `ln` still running would add a file
      // to the plugin dir while it is being removed.
      signalProcessGroup(swapperPgid, 'SIGKILL');
      await groupGone(swapperPgid);
    }
    expect(insideRuns).toBeGreaterThan(0);
    expect(refused).toBeGreaterThan(0);
    expect(await readdir(outside.path)).toEqual(['evil']);
  });
});
