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
});
