import { describe, expect, it } from 'vitest';
import { mkdir, symlink } from 'node:fs/promises';
import { resolvePlugin } from './resolve-plugin.js';
import { PluginError } from './errors.js';
import { usePluginDirs, type PluginDir } from '../__fixtures__/plugins.js';

let dir: PluginDir;
let outside: PluginDir;
usePluginDirs((d, o) => {
  dir = d;
  outside = o;
});

describe('resolvePlugin finds a plugin as the agent does', () => {
  it('finds an executable file named by the plugin ID', async () => {
    const p = await dir.bash('good', 'true');
    expect(await resolvePlugin(dir.path, 'good')).toBe(p);
  });

  it('follows a symlink that stays inside the plugin directory', async () => {
    await dir.bash('real', 'true');
    await symlink('real', dir.join('alias'));
    expect(await resolvePlugin(dir.path, 'alias')).toBe(dir.join('alias'));
  });

  it.each(['..', '', '../evil', 'a/b', '/bin/sh', 'evil\0', 'good/'])(
    'refuses the ID %j as "no such plugin"',
    async (id) => {
      await outside.bash('evil', 'true');
      await expect(resolvePlugin(dir.path, id)).rejects.toMatchObject({
        code: 'PLUGIN_NOT_FOUND',
        message: expect.stringMatching(/no such plugin/),
      });
    },
  );

  it('refuses a symlink that resolves outside the plugin directory, as "no such plugin" (CVE-2026-7474)', async () => {
    const target = await outside.bash('evil', 'true');
    await symlink(target, dir.join('escape'));
    await symlink(`../${outside.path.split('/').pop()}/evil`, dir.join('relative-escape'));
    const err = await resolvePlugin(dir.path, 'escape').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PluginError);
    expect(err).toMatchObject({ code: 'PLUGIN_NOT_FOUND', nomadMessage: 'no such plugin: "escape"' });
    await expect(resolvePlugin(dir.path, 'relative-escape')).rejects.toMatchObject({
      nomadMessage: 'no such plugin: "relative-escape"',
    });
  });

  it('refuses any absolute symlink, even one to a file inside, as Nomad does', async () => {
    const real = await dir.bash('real', 'true');
    await symlink(real, dir.join('abs'));
    await expect(resolvePlugin(dir.path, 'abs')).rejects.toMatchObject({
      code: 'PLUGIN_NOT_FOUND',
      message: expect.stringMatching(/^no such plugin: "abs"\n.*absolute path/),
    });
  });

  it('finds sub/p and ./p as Nomad does, and calls "." not executable', async () => {
    await mkdir(dir.join('sub'));
    await dir.bash('sub/p', 'true');
    await dir.bash('p', 'true');
    expect(await resolvePlugin(dir.path, 'sub/p')).toBe(dir.join('sub/p'));
    expect(await resolvePlugin(dir.path, './p')).toBe(dir.join('p'));
    await expect(resolvePlugin(dir.path, '.')).rejects.toMatchObject({
      code: 'PLUGIN_NOT_EXECUTABLE',
      nomadMessage: 'plugin not executable: "."',
    });
  });

  it('refuses a symlink to a directory that leads outside', async () => {
    await outside.bash('evil', 'true');
    await symlink(outside.path, dir.join('sub'));
    await expect(resolvePlugin(dir.path, 'sub')).rejects.toMatchObject({ code: 'PLUGIN_NOT_FOUND' });
  });

  it('reports a missing plugin as "no such plugin"', async () => {
    await expect(resolvePlugin(dir.path, 'absent')).rejects.toMatchObject({
      code: 'PLUGIN_NOT_FOUND',
      message: expect.stringMatching(/does not exist/),
    });
  });

  it('reports a file without an execute bit, and a directory, as not executable', async () => {
    await dir.bash('plain', 'true', 0o644);
    await mkdir(dir.join('folder'));
    await expect(resolvePlugin(dir.path, 'plain')).rejects.toMatchObject({
      code: 'PLUGIN_NOT_EXECUTABLE',
      message: expect.stringMatching(/chmod \+x/),
    });
    await expect(resolvePlugin(dir.path, 'folder')).rejects.toMatchObject({
      code: 'PLUGIN_NOT_EXECUTABLE',
      message: expect.stringMatching(/directory/),
    });
  });

  it('finds nothing in a plugin directory that is not an absolute path, or not configured', async () => {
    await expect(resolvePlugin('relative', 'x')).rejects.toMatchObject({
      code: 'PLUGIN_NOT_FOUND',
      nomadMessage: 'no such plugin: "x"',
    });
    await expect(resolvePlugin('', 'x')).rejects.toMatchObject({ code: 'PLUGIN_NOT_FOUND' });
  });
});
