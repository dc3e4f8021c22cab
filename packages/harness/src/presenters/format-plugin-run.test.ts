import { chmod, mkdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runPluginOnce, type PluginRunInput } from '../agent/run-plugin-once.js';
import { pluginRunJson, pluginRunText } from './format-plugin-run.js';
import { removeTempDir, tempDir } from '../../../../test/support/kit.js';

/** `dhv plugin run`'s output for runs made as the command makes them: the built-in in process, a script as a program. */

let dir = '';
afterEach(async () => {
  if (dir) await removeTempDir(dir);
  dir = '';
});

const VOLUME_ID = '1e1d4540-14f9-2515-8502-24d46291717d';
const NODE_ID = '9b6b4a1c-0d51-4d2c-a4a5-8f1b5d1f2e3a';

async function agentDirs(): Promise<Pick<PluginRunInput, 'pluginDir' | 'volumesDir' | 'nodeId' | 'nodePool'>> {
  dir = await tempDir('plugin-run-text');
  const pluginDir = join(dir, 'plugins');
  const volumesDir = join(dir, 'volumes');
  await mkdir(pluginDir);
  await mkdir(volumesDir);
  await writeFile(join(pluginDir, 'echo'), '#!/bin/sh\necho \'{"version": "1.2.0"}\'\necho "warming up" >&2\n');
  await chmod(join(pluginDir, 'echo'), 0o755);
  return { pluginDir, volumesDir, nodeId: NODE_ID, nodePool: 'default' };
}

async function succeeded(input: PluginRunInput) {
  const run = await runPluginOnce(input);
  if (!run.ok) throw run.error;
  return run;
}

describe('dhv plugin run', () => {
  it('shows what the built-in mkdir was given and the volume it made, in the order the agent builds the environment', async () => {
    const dirs = await agentDirs();
    const run = await succeeded({
      ...dirs,
      plugin: 'mkdir',
      operation: 'create',
      volumeId: VOLUME_ID,
      name: 'data',
      capacityMinBytes: 1n,
      parameters: { mode: '0750' },
    });
    const text = pluginRunText(run).split('\n');
    expect(text[0]).toMatch(/^==> mkdir create succeeded in \d+ ms \(built-in\)$/);
    expect(text.slice(1)).toEqual([
      '',
      'Environment',
      '  DHV_OPERATION          = create',
      `  DHV_VOLUMES_DIR        = ${dirs.volumesDir}`,
      `  DHV_PLUGIN_DIR         = ${dirs.pluginDir}`,
      '  DHV_NODE_POOL          = default',
      '  DHV_NAMESPACE          = default',
      '  DHV_VOLUME_NAME        = data',
      `  DHV_VOLUME_ID          = ${VOLUME_ID}`,
      '  DHV_CAPACITY_MIN_BYTES = 1',
      '  DHV_CAPACITY_MAX_BYTES = 0',
      `  DHV_NODE_ID            = ${NODE_ID}`,
      '  DHV_PARAMETERS         = {"mode":"0750"}',
      '',
      'Result',
      `  path  = ${join(dirs.volumesDir, VOLUME_ID)}`,
      '  bytes = 0',
    ]);
    expect((await stat(join(dirs.volumesDir, VOLUME_ID))).mode & 0o777).toBe(0o750);
    expect(pluginRunJson(run)).toMatchObject({
      pluginId: 'mkdir',
      executable: '(built-in)',
      builtin: true,
      operation: 'create',
      stdout: '',
      stderr: '',
      outputHeldOpen: false,
      outputHolders: [],
      warnings: [],
      result: { path: join(dirs.volumesDir, VOLUME_ID), bytes: 0n },
    });

    const deleted = await succeeded({
      ...dirs,
      plugin: 'mkdir',
      operation: 'delete',
      volumeId: VOLUME_ID,
      name: 'data',
      createdPath: join(dirs.volumesDir, VOLUME_ID),
    });
    expect(pluginRunText(deleted).split('\n').slice(-2)).toEqual(['Result', '  (no fields)']);
    await expect(stat(join(dirs.volumesDir, VOLUME_ID))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it("shows a plugin's stderr under its decoded answer, and not its stdout, which the result is", async () => {
    const dirs = await agentDirs();
    const run = await succeeded({ ...dirs, plugin: 'echo', operation: 'fingerprint' });
    const text = pluginRunText(run).split('\n');
    expect(text[0]).toMatch(
      new RegExp(`^==> echo fingerprint succeeded in \\d+ ms \\(${join(dirs.pluginDir, 'echo')}\\)$`),
    );
    expect(text.slice(1)).toEqual([
      '',
      'Environment',
      '  DHV_OPERATION = fingerprint',
      '',
      'Result',
      '  version    = 1.2.0',
      '  rawVersion = 1.2.0',
      '',
      'stderr',
      '  warming up',
    ]);
  });

  it('runs an operation outside the protocol raw: its exit, and both outputs as they came', async () => {
    const dirs = await agentDirs();
    const run = await succeeded({ ...dirs, plugin: join(dirs.pluginDir, 'echo'), operation: 'hello' });
    const text = pluginRunText(run).split('\n');
    expect(text[0]).toMatch(
      new RegExp(
        `^==> echo hello \\(not a protocol operation\\) ran in \\d+ ms \\(${join(dirs.pluginDir, 'echo')}\\)$`,
      ),
    );
    expect(text.slice(1)).toEqual([
      '',
      'Environment',
      '  DHV_OPERATION = hello',
      '',
      'Result',
      '  exitCode = 0',
      '  signal   = null',
      '  timedOut = false',
      '',
      'stdout',
      '  {"version": "1.2.0"}',
      '',
      'stderr',
      '  warming up',
    ]);
    expect(pluginRunJson(run).result).toEqual({ exitCode: 0, signal: null, timedOut: false });
  });
});
