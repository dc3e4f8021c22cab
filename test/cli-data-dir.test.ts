import { existsSync } from 'node:fs';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { removeTempDir, runDhv, tempDir } from './support/kit.js';

/**
 * Issue 35: the data dir is never invented. A command that only reads, with no data dir
 * where it looked, says so, names the path and how to set it, creates nothing and exits
 * 1; a folder holding a real Nomad agent's client state is refused for dhv's own.
 */

let t: string;
beforeEach(async () => {
  t = await tempDir('data-dir');
});
afterEach(async () => {
  await removeTempDir(t);
});

const dhv = (args: string[], env: NodeJS.ProcessEnv = {}) =>
  runDhv(args, { cwd: t, env: { DHV_DATA_DIR: undefined, ...env } });

describe('issue 35: the data dir is stated and never invented', () => {
  it('agent gc (a listing) in a folder with no data dir makes none and no node ID, and says which data dir it read', async () => {
    const run = await dhv(['agent', 'gc']);
    expect(run.exitCode).toBe(0);
    expect(run.stderr).toContain(`Data dir: ${join(t, '.dhv')}`);
    expect(await readdir(t)).toEqual([]);
  });

  it('volume status and node status in a folder with no data dir create none, name where they looked and how to set it, and exit 1', async () => {
    for (const command of [
      ['volume', 'status'],
      ['node', 'status'],
    ]) {
      const run = await dhv(command);
      expect(run.exitCode, command.join(' ')).toBe(1);
      expect(run.stderr).toContain(`no dhv data dir at ${join(t, '.dhv')}`);
      for (const how of ['--data-dir', 'DHV_DATA_DIR', '--config']) expect(run.stderr).toContain(how);
      expect(run.stdout).not.toContain('No dynamic host volumes');
      const json = await dhv([...command, '--json']);
      expect((JSON.parse(json.stderr) as { error: { code: string; dataDir: string } }).error).toMatchObject({
        code: 'DATA_DIR_MISSING',
        dataDir: join(t, '.dhv'),
      });
    }
    const misspelt = await dhv(['volume', 'status'], { DHV_DATA_DIR: join(t, 'dat') });
    expect(misspelt.exitCode).toBe(1);
    expect(misspelt.stderr).toContain(`no dhv data dir at ${join(t, 'dat')} (DHV_DATA_DIR)`);
    expect(await readdir(t)).toEqual([]);
  });

  it("a data dir holding a Nomad agent's client/state.db is refused, with the reason and the fix, and nothing is written into it", async () => {
    const nomad = join(t, 'nomad-data');
    await mkdir(join(nomad, 'client'), { recursive: true });
    await writeFile(join(nomad, 'client', 'state.db'), 'a real agent’s BoltDB\n');
    const config = join(t, 'client.hcl');
    await writeFile(config, `data_dir = "${nomad}"\nclient {\n  enabled = true\n}\n`);
    await writeFile(join(t, 'v.hcl'), 'type = "host"\nname = "v"\nplugin_id = "mkdir"\n');

    for (const command of [
      ['volume', 'status'],
      ['node', 'status'],
      ['agent', 'gc'],
      ['agent', 'restart'],
      ['volume', 'create', 'v.hcl'],
    ]) {
      const run = await dhv([...command, '--config', config]);
      expect(run.exitCode, command.join(' ')).toBe(1);
      expect(run.stderr).toContain(`the data dir ${nomad} (data_dir in ${config}) holds a Nomad agent's client state`);
      expect(run.stderr).toContain('dhv is a simulator and never writes into a real agent');
    }
    const flag = await dhv(['agent', 'gc', '--data-dir', nomad]);
    expect(flag.stderr).toContain(`the data dir ${nomad} (--data-dir) holds a Nomad agent's client state`);
    expect(await readdir(nomad)).toEqual(['client']);
    expect(await readdir(join(nomad, 'client'))).toEqual(['state.db']);
    expect(existsSync(join(t, '.dhv'))).toBe(false);
  });

  it('every command that uses a data dir says which: a line on stderr where no --data-dir named it, and DataDir in its --json', async () => {
    const data = join(t, 'from-env');
    const env = { DHV_DATA_DIR: data };
    // Made by a command that writes, named by the environment.
    const fingerprint = await dhv(['agent', 'fingerprint'], env);
    expect(fingerprint.exitCode).toBe(0);
    expect(fingerprint.stderr.split('\n')).toContain(`==> Data dir: ${data} (DHV_DATA_DIR)`);
    expect(fingerprint.stdout).not.toContain('Data dir');
    // dhv's documents carry it, in their casing; --json keeps stderr for an error document alone.
    const json = await dhv(['agent', 'fingerprint', '--json'], env);
    expect(JSON.parse(json.stdout).DataDir).toEqual({ Path: data, From: 'DHV_DATA_DIR' });
    expect(json.stderr).toBe('');
    const gc = await dhv(['agent', 'gc', '--json', '--data-dir', data]);
    expect(JSON.parse(gc.stdout).DataDir).toEqual({ Path: data, From: '--data-dir' });
    const run = await dhv(['plugin', 'run', 'mkdir', 'fingerprint', '--json', '--data-dir', data]);
    expect(JSON.parse(run.stdout)).toMatchObject({ kind: 'PluginRun', dataDir: { path: data, from: '--data-dir' } });
    // Nomad's own objects stay as Nomad's API gives them; the line follows the document on stderr.
    const status = await dhv(['volume', 'status', '--json'], env);
    expect(status.stdout.trim()).toBe('[]');
    expect(status.stderr).toBe(`==> Data dir: ${data} (DHV_DATA_DIR)\n`);
    const node = await dhv(['node', 'status', '--json'], env);
    expect(JSON.parse(node.stdout)).not.toHaveProperty('DataDir');
    expect(node.stderr).toBe(`==> Data dir: ${data} (DHV_DATA_DIR)\n`);
    // The default is named as the default, with what would have named another.
    await mkdir(join(t, '.dhv'));
    const byDefault = await dhv(['volume', 'status']);
    expect(byDefault.exitCode).toBe(0);
    expect(byDefault.stderr).toContain(
      `==> Data dir: ${join(t, '.dhv')} (the default, ./.dhv in ${t}: no --data-dir, DHV_DATA_DIR or data_dir in --config)\n`,
    );
    // --data-dir on the command line says it already: no line.
    const named = await dhv(['volume', 'status', '--data-dir', data]);
    expect(named.stderr).not.toContain('Data dir');
  });
});
