import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { removeTempDir, runDhv, tempDir } from './support/kit.js';

let dataDir: string;
beforeEach(async () => {
  dataDir = await tempDir('cli-contract');
});
afterEach(async () => {
  await removeTempDir(dataDir);
});

async function dhv(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const { exitCode, stdout, stderr } = await runDhv(args, { env: { DHV_DATA_DIR: dataDir } });
  return { code: exitCode, stdout, stderr };
}

describe('one CLI contract for every command', () => {
  it('exits 2 for the same usage mistake, --param nope, from plugin run and from check', async () => {
    const fromRun = await dhv('plugin', 'run', 'mkdir', 'create', '--param', 'nope');
    const fromCheck = await dhv('check', '/bin/true', '--param', 'nope');
    expect([fromRun.code, fromCheck.code]).toEqual([2, 2]);
    expect(fromRun.stderr).toMatch(/^Error: --param "nope": expected key=value/);
    expect(fromCheck.stderr).toMatch(/^Error: --param "nope": expected key=value/);
  });

  it('prints a usage error as one JSON error on stderr with --json, headed apiVersion and kind, without oclif metadata', async () => {
    for (const args of [
      ['volume', 'status', '--bogus'],
      ['check', '/bin/true', '--bogus'],
      ['init', '--bogus', 'x'],
    ]) {
      const run = await dhv(...args, '--json');
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stdout).toBe('');
      expect(JSON.parse(run.stderr)).toEqual({
        apiVersion: 'dhv/v1',
        kind: 'Error',
        error: { code: 'USAGE', message: expect.stringContaining('Nonexistent flag: --bogus') },
      });
    }
    // Words that name no command meet oclif's hook, not a command: the same document.
    for (const json of ['--json', '-json']) {
      const unknown = await dhv('volum', json);
      expect(unknown.code).toBe(2);
      expect(JSON.parse(unknown.stderr), json).toMatchObject({
        apiVersion: 'dhv/v1',
        kind: 'Error',
        error: { code: 'UNKNOWN_COMMAND' },
      });
    }
  });

  it('prints an operation failure in the same shape from an agent command, an authoring command and dhv check', async () => {
    const headed = (code: string) => ({
      apiVersion: 'dhv/v1',
      kind: 'Error',
      error: expect.objectContaining({ code }),
    });
    const missing = await dhv('volume', 'status', 'nope', '--json');
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stderr)).toEqual(headed('VOLUME_NOT_FOUND'));
    const build = await dhv('build', join(dataDir, 'none.ts'), '-o', join(dataDir, 'out'), '--json');
    expect(build.code).toBe(1);
    expect(JSON.parse(build.stderr)).toEqual(headed('BUILD_FAILED'));
    const noPlugin = await dhv('check', join(dataDir, 'no-such-plugin'), '--json');
    expect(noPlugin.code).toBe(1);
    expect(JSON.parse(noPlugin.stderr)).toEqual(headed('PLUGIN_NOT_FOUND'));
    // A check run that ran and failed: its verdict is the report on stdout, headed as every document
    // is, and the warnings said before it (a plugin its group can write) ride in it.
    const plugin = join(dataDir, 'fails');
    await writeFile(plugin, '#!/bin/sh\nexit 1\n');
    await chmod(plugin, 0o775);
    const failed = await dhv('check', plugin, '--only', 'discovery.fingerprint-succeeds', '--json');
    expect(failed.code).toBe(1);
    expect(failed.stderr).toBe('');
    expect(JSON.parse(failed.stdout)).toMatchObject({
      apiVersion: 'dhv/v1',
      kind: 'CheckReport',
      ok: false,
      warnings: [expect.stringMatching(/^the plugin .*fails \(mode 0775\) can be written by group /)],
    });
  });

  it("ends agent fingerprint's failed CI gate with the error document too, carrying the config's warnings", async () => {
    const pluginDir = join(dataDir, 'plugins');
    await mkdir(pluginDir);
    await writeFile(join(pluginDir, 'crashes'), '#!/bin/sh\nexit 2\n', { mode: 0o755 });
    const config = join(dataDir, 'agent.hcl');
    await writeFile(config, 'client {\n  datacentre = "dc1"\n}\n');
    const run = await dhv('agent', 'fingerprint', '--plugin-dir', pluginDir, '--config', config, '--json');
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout).Skipped.map((s: { ID: string }) => s.ID)).toEqual(['crashes']);
    expect(JSON.parse(run.stderr)).toEqual({
      apiVersion: 'dhv/v1',
      kind: 'Error',
      error: {
        code: 'PLUGINS_SKIPPED',
        message: expect.stringMatching(/^1 plugin skipped \(crashes; /),
        plugins: ['crashes'],
        warnings: [expect.stringContaining('datacentre')],
      },
    });
  });
});
