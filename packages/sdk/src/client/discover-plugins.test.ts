import { describe, expect, it } from 'vitest';
import { mkdir, symlink } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { discoverPlugins, BUILTIN_MKDIR_ID } from './discover-plugins.js';
import { PluginError } from './errors.js';
import { usePluginDirs, type PluginDir } from '../__fixtures__/plugins.js';

// Tests that are not about the 1 s budget get more, so a loaded machine cannot fail them.
const RELAXED = { timeoutMs: 10_000 };

let dir: PluginDir;
let outside: PluginDir;
usePluginDirs((d, o) => {
  dir = d;
  outside = o;
});

describe('discoverPlugins lists and fingerprints candidates as the agent does', () => {
  it('returns each good plugin with the version the agent stores', async () => {
    await dir.bash('alpha', `echo '{"version": "1"}'`);
    await dir.bash('beta', `echo '{"version": "v2.1-rc.1"}'`);
    const discovery = await discoverPlugins(dir.path, RELAXED);
    expect(discovery.plugins.map(({ id, version, executable }) => ({ id, version, executable }))).toEqual([
      { id: 'alpha', version: '1.0.0', executable: dir.join('alpha') },
      { id: 'beta', version: '2.1.0-rc.1', executable: dir.join('beta') },
    ]);
    expect(discovery.skipped).toEqual([]);
  });

  it('fingerprints every candidate at once', async () => {
    // Each plugin waits until all three have started: run one after another, each would time out.
    const names = ['one', 'two', 'three'];
    for (const name of names) {
      await dir.bash(
        name,
        [
          `/usr/bin/touch ${outside.join(`${name}.started`)}`,
          `for i in $(/usr/bin/seq 1 150); do`,
          `  [ ${names.map((n) => `-e ${outside.join(`${n}.started`)}`).join(' -a ')} ] && break`,
          `  /usr/bin/sleep 0.005`,
          `done`,
          `[ ${names.map((n) => `-e ${outside.join(`${n}.started`)}`).join(' -a ')} ] || exit 7`,
          `echo '{"version": "1"}'`,
        ].join('\n'),
      );
    }
    const discovery = await discoverPlugins(dir.path, { timeoutMs: 5000 });
    expect(discovery.skipped).toEqual([]);
    expect(discovery.plugins.map((p) => p.id).sort()).toEqual([...names].sort());
  });

  it('skips a slow plugin at the 1 s fingerprint timeout, with the reason, and keeps the others', async () => {
    await dir.bash('good', `echo '{"version": "1"}'`);
    await dir.bash('slow', `/usr/bin/sleep 30`);
    const discovery = await discoverPlugins(dir.path);
    expect(discovery.plugins.map((p) => p.id)).toEqual(['good']);
    expect(discovery.skipped).toHaveLength(1);
    expect(discovery.skipped[0]).toMatchObject({
      id: 'slow',
      reason: expect.stringMatching(
        /^error fingerprinting plugin "slow": signal: killed\nthe plugin ran past its 1s deadline/,
      ),
    });
    expect(discovery.skipped[0]!.error).toBeInstanceOf(PluginError);
    expect(discovery.skipped[0]!.error!.code).toBe('PLUGIN_TIMED_OUT');
  });

  it('skips failing and unparseable plugins with their reasons', async () => {
    await dir.bash('fails', `echo '{"error": "no license"}'; exit 1`);
    await dir.bash('garbage', `echo 'hello'`);
    await dir.bash('bad-version', `echo '{"version": "one"}'`);
    const { plugins, skipped } = await discoverPlugins(dir.path, RELAXED);
    expect(plugins).toEqual([]);
    expect(Object.fromEntries(skipped.map((s) => [s.id, s.error?.code]))).toEqual({
      fails: 'PLUGIN_FAILED',
      garbage: 'PLUGIN_BAD_OUTPUT',
      'bad-version': 'PLUGIN_BAD_OUTPUT',
    });
    // On a failed fingerprint the agent does not read stdout: no {"error"} message.
    expect(skipped.find((s) => s.id === 'fails')).toMatchObject({
      reason:
        'error fingerprinting plugin "fails": exit status 1\nthe plugin said: no license (a real agent ignores a failed fingerprint\'s stdout)',
      logged: { level: 'error', message: 'error running plugin', error: 'exit status 1' },
    });
  });

  it('does not run directories or files without an execute bit', async () => {
    await mkdir(dir.join('folder'));
    await dir.bash('plain', `/usr/bin/touch ${outside.join('plain.ran')}; echo '{"version": "1"}'`, 0o644);
    const discovery = await discoverPlugins(dir.path, RELAXED);
    // Not candidates: never run, never logged, as by a real agent.
    expect(discovery.plugins).toEqual([]);
    expect(discovery.skipped).toEqual([]);
    expect(existsSync(outside.join('plain.ran'))).toBe(false);
  });

  it(`runs a file named ${BUILTIN_MKDIR_ID}, as a real agent does, but never publishes it: the built-in shadows it`, async () => {
    await dir.bash(BUILTIN_MKDIR_ID, `/usr/bin/touch ${outside.join('mkdir.ran')}; echo '{"version": "9"}'`);
    const discovery = await discoverPlugins(dir.path, RELAXED);
    expect(discovery.plugins).toEqual([]);
    expect(discovery.skipped).toMatchObject([
      { id: BUILTIN_MKDIR_ID, reason: expect.stringMatching(/the built-in mkdir plugin is what the node publishes/) },
    ]);
    expect(existsSync(outside.join('mkdir.ran'))).toBe(true);
  });

  it('skips a symlink that leads outside the plugin directory as "no such plugin", without running it', async () => {
    const target = await outside.bash('evil', `/usr/bin/touch ${outside.join('evil.ran')}; echo '{"version": "1"}'`);
    await symlink(target, dir.join('evil'));
    const { plugins, skipped } = await discoverPlugins(dir.path, RELAXED);
    expect(plugins).toEqual([]);
    expect(skipped).toMatchObject([{ id: 'evil', error: { code: 'PLUGIN_NOT_FOUND' } }]);
    expect(existsSync(outside.join('evil.ran'))).toBe(false);
  });

  it('finds nothing in a plugin directory that does not exist', async () => {
    expect(await discoverPlugins(dir.join('absent'))).toEqual({
      plugins: [],
      skipped: [],
      logs: [{ level: 'debug', message: 'plugin dir does not exist', dir: dir.join('absent') }],
    });
  });
});
