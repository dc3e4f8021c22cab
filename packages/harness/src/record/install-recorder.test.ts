import {
  chmod,
  link,
  lstat,
  mkdir,
  readdir,
  readFile,
  rename,
  stat,
  symlink,
  unlink,
  writeFile,
} from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { installRecorder, RECORD_DIR, recordPaths, removeRecorder, type RecordPaths } from './install-recorder.js';
import { RECORDER_MARK } from './recorder-program.js';
import { removeTempDir, tempDir } from '../../../../test/support/kit.js';

/**
 * `dhv record` and `dhv record --remove` as file operations: the recorder goes in front of
 * the plugin and the very same file comes back, and every state a killed run leaves is
 * either finished or refused with nothing changed. (test/record-replay.test.ts runs the
 * recorder itself, as an agent does.)
 */

let dir = '';
afterEach(async () => {
  if (dir) await removeTempDir(dir);
  dir = '';
});

const PLUGIN = '#!/bin/sh\necho \'{"version": "1.0.0"}\'\n';
const NODE = '/usr/local/bin/node';

/** A plugin dir holding the plugin `odd`, and the record paths of it. */
async function pluginDir(mode = 0o750): Promise<RecordPaths> {
  dir = await tempDir('install-recorder');
  const plugins = join(dir, 'plugins');
  await mkdir(plugins);
  await writeFile(join(plugins, 'odd'), PLUGIN);
  await chmod(join(plugins, 'odd'), mode);
  return recordPaths('odd', plugins);
}

const identity = async (path: string) => {
  const s = await lstat(path);
  return { ino: s.ino, mode: s.mode, uid: s.uid, size: s.size, mtimeMs: s.mtimeMs };
};

describe('dhv record', () => {
  it('puts a recorder at the plugin path and keeps the very same plugin file beside it, out of discovery', async () => {
    const paths = await pluginDir();
    const before = await identity(paths.pluginPath);
    const result = await installRecorder(paths, { node: NODE });
    const folder = join(dir, 'plugins', RECORD_DIR, 'odd');
    expect(result).toMatchObject({
      pluginId: 'odd',
      pluginPath: join(dir, 'plugins', 'odd'),
      original: join(folder, 'odd'),
      log: join(folder, 'calls.jsonl'),
      cleared: [],
    });
    expect(await identity(result.original)).toEqual(before);
    const recorder = await readFile(paths.pluginPath, 'utf8');
    expect(recorder.split('\n').slice(0, 2)).toEqual([`#!${NODE}`, `// ${RECORDER_MARK} (odd).`]);
    expect((await stat(paths.pluginPath)).mode & 0o7777).toBe(0o750);
    expect((await readdir(join(dir, 'plugins'))).sort()).toEqual([RECORD_DIR, 'odd']);
    expect(JSON.parse(await readFile(paths.state, 'utf8'))).toMatchObject({
      format: 1,
      pluginId: 'odd',
      original: { path: result.original, ino: before.ino, size: PLUGIN.length },
      log: result.log,
    });

    const removed = await removeRecorder(paths);
    expect(removed).toEqual({
      pluginId: 'odd',
      pluginPath: paths.pluginPath,
      log: result.log,
      outcome: 'restored',
      cleared: [],
    });
    expect(await identity(paths.pluginPath)).toEqual(before);
    expect(await readdir(join(dir, 'plugins'))).toEqual(['odd']);
  });

  it('writes the log where --log says, and keeps nothing of its own when told to stop twice', async () => {
    const paths = await pluginDir();
    const log = join(dir, 'calls.jsonl');
    expect((await installRecorder(paths, { node: NODE, log })).log).toBe(log);
    await removeRecorder(paths);
    const again = await removeRecorder(paths);
    expect(again).toMatchObject({ outcome: 'not-recording', log: undefined, cleared: [] });
  });

  it('refuses what no agent would run as a plugin, and a plugin ID without a plugin dir', async () => {
    const paths = await pluginDir(0o644);
    await expect(installRecorder(paths, { node: NODE })).rejects.toMatchObject({
      code: 'RECORD_NOT_PLUGIN',
      message: `${paths.pluginPath} is not an executable file, so no agent runs it as a plugin`,
    });
    const linked = recordPaths(join(dir, 'plugins', 'linked'), undefined);
    await symlink(paths.pluginPath, linked.pluginPath);
    await expect(installRecorder(linked, { node: NODE })).rejects.toMatchObject({
      code: 'RECORD_SYMLINK',
      message: `${linked.pluginPath} is a symbolic link; record the file it points to, or replace the link by the file`,
    });
    const missing = recordPaths(join(dir, 'plugins', 'gone'), undefined);
    await expect(installRecorder(missing, { node: NODE })).rejects.toMatchObject({
      code: 'RECORD_NO_PLUGIN',
      message: `no plugin at ${missing.pluginPath}: ENOENT`,
    });
    expect(() => recordPaths('odd', undefined)).toThrow(
      'plugin "odd": a plugin ID needs the client\'s plugin dir\n' +
        'Give --plugin-dir (host_volume_plugin_dir in the client block, by default <data_dir>/host_volume_plugins) or the path of the plugin.',
    );
    expect(() => recordPaths(join(dir, 'a\nb'), undefined)).toThrow('a path on one line is needed');
    // Nothing of a record was left by the refusals.
    expect((await readdir(join(dir, 'plugins'))).sort()).toEqual(['linked', 'odd']);
  });

  it('refuses to record twice, and a recorder whose state is gone', async () => {
    const paths = await pluginDir();
    const result = await installRecorder(paths, { node: NODE });
    await expect(installRecorder(paths, { node: NODE })).rejects.toMatchObject({
      code: 'RECORD_ALREADY',
      message: expect.stringMatching(
        new RegExp(
          `^${paths.pluginPath} is already being recorded \\(since .*, into ${result.log}\\)\nRun \`dhv record --remove ${paths.pluginPath}\` first\\.$`,
        ),
      ),
    });
    await unlink(paths.state);
    await expect(installRecorder(paths, { node: NODE })).rejects.toMatchObject({ code: 'RECORD_STATE_CHANGED' });
    await unlink(paths.original);
    await expect(installRecorder(paths, { node: NODE })).rejects.toMatchObject({
      code: 'RECORD_STATE_MISSING',
      message: expect.stringContaining(`${paths.pluginPath} is already a dhv recorder, but ${paths.state} is missing`),
    });
  });

  it('finishes a record killed before its last rename: the plugin never left, its link and state go', async () => {
    const paths = await pluginDir();
    const before = await identity(paths.pluginPath);
    await installRecorder(paths, { node: NODE });
    // The plugin back at its path as well as kept: what a record killed before its rename leaves.
    await link(paths.original, `${paths.pluginPath}.tmp`);
    await rename(`${paths.pluginPath}.tmp`, paths.pluginPath);

    const again = await installRecorder(paths, { node: NODE });
    expect(again.cleared).toEqual([paths.original, paths.state]);
    await removeRecorder(paths);

    await installRecorder(paths, { node: NODE });
    await link(paths.original, `${paths.pluginPath}.tmp`);
    await rename(`${paths.pluginPath}.tmp`, paths.pluginPath);
    const removed = await removeRecorder(paths);
    expect(removed).toMatchObject({
      outcome: 'finished-interrupted',
      log: paths.defaultLog,
      cleared: [paths.original, paths.state],
    });
    expect(await identity(paths.pluginPath)).toEqual(before);
    expect(await readdir(join(dir, 'plugins'))).toEqual(['odd']);
  });

  it('finishes a --remove killed after its rename: the plugin stays, the state goes', async () => {
    const paths = await pluginDir();
    await installRecorder(paths, { node: NODE });
    await rename(paths.original, paths.pluginPath);
    expect(await removeRecorder(paths)).toMatchObject({ outcome: 'finished-interrupted', cleared: [paths.state] });
    expect(await readFile(paths.pluginPath, 'utf8')).toBe(PLUGIN);
  });

  it('refuses, changing nothing, when the recorder or the kept plugin changed since', async () => {
    const paths = await pluginDir();
    await installRecorder(paths, { node: NODE });
    await writeFile(`${paths.pluginPath}.new`, '#!/bin/sh\necho new\n');
    await rename(`${paths.pluginPath}.new`, paths.pluginPath);
    const listing = async () => [...(await readdir(join(dir, 'plugins'))), ...(await readdir(paths.folder))].sort();
    const before = await listing();
    await expect(removeRecorder(paths)).rejects.toMatchObject({
      code: 'RECORD_STATE_CHANGED',
      message: expect.stringMatching(
        new RegExp(
          `^not restoring ${paths.pluginPath}: ${paths.pluginPath} is no longer the recorder dhv record put there \\(something replaced it since .*\\)\n` +
            `Nothing was changed\\. Decide by hand which file belongs at ${paths.pluginPath}; the record folder is ${paths.folder}\\.$`,
        ),
      ),
    });
    expect(await listing()).toEqual(before);
    await chmod(paths.original, 0o700);
    await expect(removeRecorder(paths)).rejects.toThrow(
      `the plugin kept at ${paths.original} has another mode or owner than when it was recorded`,
    );
    await unlink(paths.original);
    await expect(removeRecorder(paths)).rejects.toThrow(`the plugin kept at ${paths.original} is missing`);
  });

  it('refuses a state file it did not write', async () => {
    const paths = await pluginDir();
    await installRecorder(paths, { node: NODE });
    await writeFile(paths.state, '{"format": 2}\n');
    await expect(removeRecorder(paths)).rejects.toMatchObject({
      code: 'RECORD_STATE_CHANGED',
      message: `${paths.state} is not what dhv record writes; nothing was changed`,
    });
  });
});
