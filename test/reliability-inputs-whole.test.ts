import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { bashPlugin, testWithAgent, volumeHcl, type TempAgent } from './support/dhv-agent.js';
import { runDhv } from './support/run-dhv.js';

/**
 * Inputs reach the plugin as written: every parameter key, `__proto__` and the names of
 * Object.prototype's own members included, from an HCL spec, a JSON spec and `--param`,
 * and again at every restore.
 */
const it = testWithAgent();

/** A plugin that appends each create's DHV_PARAMETERS to `log`, one line each. */
async function recordingPlugin(agent: TempAgent): Promise<string> {
  const log = join(agent.dir, 'parameters.log');
  await agent.plugin('rec', bashPlugin({ createPrefix: `echo "$DHV_PARAMETERS" >> "${log}"` }));
  return log;
}

const lines = async (file: string) => (await readFile(file, 'utf8')).trim().split('\n');

describe.concurrent('inputs kept whole', () => {
  it('hands the plugin a parameter named __proto__ (and constructor, toString) from HCL, JSON and --param, and at restore', async ({
    agent,
  }) => {
    const log = await recordingPlugin(agent);
    const hcl = await agent.file(
      'p.hcl',
      volumeHcl(
        { name: 'p', plugin_id: 'rec' },
        'parameters {\n  __proto__ = "x"\n  constructor = "y"\n  toString = "z"\n  a = "b"\n}',
      ),
    );
    const json = await agent.file(
      'q.json',
      JSON.stringify({
        type: 'host',
        name: 'q',
        plugin_id: 'rec',
        parameters: JSON.parse('{"__proto__": "x", "hasOwnProperty": "h", "a": "b"}'),
      }),
    );
    // Go's json.Marshal of a map[string]string: keys sorted by their bytes.
    const fromHcl = '{"__proto__":"x","a":"b","constructor":"y","toString":"z"}';
    const fromJson = '{"__proto__":"x","a":"b","hasOwnProperty":"h"}';
    const p = await agent.json('volume', 'create', hcl);
    await agent.json('volume', 'create', json);
    expect(await lines(log)).toEqual([fromHcl, fromJson]);
    expect(p.Volume.Parameters).toEqual(JSON.parse(fromHcl));

    const run = await agent.dhv('plugin', 'run', 'rec', 'create', '--param', '__proto__=x', '--param', 'a=b');
    expect(run.exitCode, run.stderr).toBe(0);
    expect((await lines(log)).at(-1)).toBe('{"__proto__":"x","a":"b"}');

    // The record keeps them: a restore (from the files, then from the index) asks again with every key.
    for (let i = 0; i < 2; i++) expect((await agent.dhv('agent', 'restart')).exitCode).toBe(0);
    expect((await lines(log)).slice(-4).sort()).toEqual([fromHcl, fromHcl, fromJson, fromJson].sort());
  });

  it('publishes a volume named __proto__ in the node’s HostVolumes, so a second one is not placed', async ({
    agent,
  }) => {
    await agent.json(
      'volume',
      'create',
      await agent.file('proto.hcl', volumeHcl({ name: '__proto__', plugin_id: 'mkdir' })),
    );
    expect(Object.keys((await agent.json('node', 'status')).HostVolumes)).toEqual(['__proto__']);
    const again = await agent.dhv(
      'volume',
      'create',
      await agent.file('proto2.hcl', volumeHcl({ name: '__proto__', plugin_id: 'mkdir' })),
    );
    expect(again.exitCode).toBe(1);
    expect(again.stderr).toContain('1 nodes had existing volume');
  });

  it('takes a relative path a plugin answers as Nomad’s client does: ready, published as given, whatever folder dhv runs in', async ({
    agent,
  }) => {
    // As the plugin a real Nomad 2.0.5 agent was recorded with (real-agent vectors, 02-loopback-and-errors):
    // it makes nothing and answers volumes/<id>; that agent called the volume ready and published the path as given.
    await agent.plugin(
      'relative-path',
      `#!/bin/bash
case "$DHV_OPERATION" in
  fingerprint) echo '{"version": "1.0.0"}' ;;
  create) echo '{"path": "volumes/'"$DHV_VOLUME_ID"'", "bytes": 1024}' ;;
  delete) echo '{}' ;;
esac
`,
    );
    await mkdir(agent.volumesDir, { recursive: true }); // there before the agent starts, as on a real node
    const v = await agent.json(
      'volume',
      'create',
      await agent.file('rel.hcl', volumeHcl({ name: 'rel', plugin_id: 'relative-path' })),
    );
    const path = `volumes/${v.Volume.ID}`;
    expect(v.Volume).toMatchObject({ HostPath: path, State: 'ready' });
    expect((await agent.json('node', 'status')).HostVolumes.rel).toMatchObject({ Path: path });
    // The same answer from any folder: one where volumes/<id> exists, and one where it does not.
    const elsewhere = join(agent.dir, 'elsewhere');
    await mkdir(join(elsewhere, path), { recursive: true });
    for (const cwd of [agent.dir, elsewhere, '/']) {
      const run = await runDhv(['volume', 'status', v.Volume.ID, '--json', '--data-dir', agent.dataDir], {
        cwd,
        env: { DHV_DATA_DIR: undefined },
      });
      expect(run.exitCode, run.stderr).toBe(0);
      expect(JSON.parse(run.stdout), cwd).toMatchObject({ HostPath: path, State: 'ready' });
      expect(JSON.parse(run.stdout).StateError, cwd).toBeUndefined();
    }
    const restart = await agent.dhv('agent', 'restart');
    expect(restart.stdout, restart.stderr).toContain(`✓ Host volume "${v.Volume.ID.slice(0, 8)}" rel ready at ${path}`);
    const reboot = await agent.dhv('agent', 'restart', '--reboot');
    expect(reboot.exitCode, reboot.stderr).toBe(0);
    expect((await agent.json('volume', 'status', v.Volume.ID)).State).toBe('ready');
    expect((await agent.dhv('volume', 'delete', v.Volume.ID)).exitCode).toBe(0);
  });

  it('renders -t templates Go renders, with Go’s output, not JavaScript’s errors', async ({ agent }) => {
    const run = await agent.dhv('node', 'status', '-t', '{{printf "%.200f|%.101e|%.0f|%c" 1.5 1.5 2.5 -1}}');
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stdout).toBe(`1.5${'0'.repeat(199)}|1.5${'0'.repeat(100)}e+00|2|\ufffd\n`);
  });
});
