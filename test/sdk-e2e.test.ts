import { afterEach, beforeAll, afterAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundlePlugin } from '@dhv/sdk/build';
import { buildEnvironment, execPlugin, spawnPlugin, PluginError } from '@dhv/sdk/client';
import { removeTempDir, tempDir } from './support/kit.js';

const ENTRY = fileURLToPath(new URL('./fixtures/sdk/demo-plugin.ts', import.meta.url));
const VOLUME_ID = '5b8a2a5e-8f0a-4c8e-9a4f-0c7d3f2b1a99';

let work: string;
let plugin: string;
let volumesDir: string;
const running: Array<() => void> = [];

beforeAll(async () => {
  work = await tempDir('sdk-e2e');
  plugin = join(work, 'plugins', 'demo');
  volumesDir = join(work, 'volumes');
  await bundlePlugin({ entry: ENTRY, outfile: plugin });
});

afterEach(() => {
  for (const stop of running.splice(0)) stop();
});

afterAll(async () => {
  await removeTempDir(work);
});

const request = (over: Record<string, unknown> = {}) => ({
  volumesDir,
  volumeName: 'data',
  volumeId: VOLUME_ID,
  nodeId: 'node-1',
  ...over,
});

describe('a plugin written with definePlugin, bundled to one file, run as a Nomad agent runs it', () => {
  it('is one executable file whose launcher needs no PATH', async () => {
    const info = await stat(plugin);
    expect(info.mode & 0o111).not.toBe(0);
    expect((await readFile(plugin, 'utf8')).split('\n').slice(0, 2)).toEqual([
      '#!/bin/sh',
      expect.stringContaining(`for n in '${process.execPath}' `),
    ]);
  });

  it('fingerprints under the agent environment (only DHV_OPERATION)', async () => {
    // A generous timeout: this is about the environment, and a loaded CI machine starts node slowly.
    expect(await execPlugin(plugin, 'fingerprint', {}, { timeoutMs: 10_000 })).toMatchObject({
      version: '0.3.0',
      rawVersion: '0.3',
      stdout: '{"version":"0.3"}\n',
      stderr: '',
    });
  });

  it('creates the volume, idempotently, with its log on stderr and one JSON document on stdout', async () => {
    const first = await execPlugin(plugin, 'create', request({ capacityMinBytes: 2n ** 60n }));
    expect(first).toMatchObject({ path: join(volumesDir, VOLUME_ID), bytes: 2n ** 60n });
    expect(first.stdout).toBe(`{"path":"${join(volumesDir, VOLUME_ID)}","bytes":1152921504606846976}\n`);
    expect(first.stderr).toBe(`creating ${join(volumesDir, VOLUME_ID)}\n`);
    expect((await stat(first.path)).isDirectory()).toBe(true);
    const again = await execPlugin(plugin, 'create', request({ capacityMinBytes: 2n ** 60n }));
    expect(again.path).toBe(first.path);
  });

  it('deletes the volume, idempotently', async () => {
    const { path } = await execPlugin(plugin, 'create', request());
    await execPlugin(plugin, 'delete', request({ createdPath: path }));
    expect(existsSync(path)).toBe(false);
    await execPlugin(plugin, 'delete', request({ createdPath: path }));
  });

  it("fails with the plugin's own message, as the agent would show it", async () => {
    const err = await execPlugin(plugin, 'create', request({ parameters: { fail: 'on purpose' } })).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(PluginError);
    expect(err).toMatchObject({
      code: 'PLUGIN_FAILED',
      exitCode: 1,
      pluginMessage: 'asked to fail: on purpose',
      message: `error creating volume "${VOLUME_ID}" with plugin "demo": exit status 1: asked to fail: on purpose`,
    });
    expect((err as PluginError).stdout).toBe('{"error":"asked to fail: on purpose"}\n');
  });

  it('refuses a delete of a path that is not the one create made', async () => {
    const err = await execPlugin(plugin, 'delete', request({ createdPath: '/etc' })).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'PLUGIN_FAILED', pluginMessage: expect.stringMatching(/refusing to delete/) });
  });

  it('reports every problem of an invalid environment with exit status 2', async () => {
    const run = await spawnPlugin(
      plugin,
      ['create'],
      { DHV_OPERATION: 'create' },
      { timeoutMs: 10_000, maxOutputBytes: 1 << 20 },
    );
    expect(run.exitCode).toBe(2);
    const { error } = JSON.parse(run.stdout.toString()) as { error: string };
    expect(error).toMatch(/^invalid create request: DHV_VOLUMES_DIR is missing; .*DHV_PARAMETERS is missing$/);
  });

  it('refuses an unknown operation with exit status 2', async () => {
    const run = await spawnPlugin(
      plugin,
      ['resize'],
      { DHV_OPERATION: 'resize' },
      { timeoutMs: 10_000, maxOutputBytes: 1 << 20 },
    );
    expect(run.exitCode).toBe(2);
    expect(JSON.parse(run.stdout.toString())).toEqual({
      error: 'unknown operation "resize"; expected one of: fingerprint, create, delete',
    });
  });

  it('turns an exception thrown outside the handler (in a timer) into {"error"} and exit 1', async () => {
    const err = await execPlugin(plugin, 'create', request({ parameters: { crash: 'yes' } })).catch((e: unknown) => e);
    expect(err).toMatchObject({
      code: 'PLUGIN_FAILED',
      exitCode: 1,
      pluginMessage: 'unexpected failure: crashed in a timer',
    });
    expect((err as PluginError).stdout).not.toMatch(/\n\s+at /);
  });

  it("aborts the handler's signal on SIGTERM, so it can clean up and answer", async () => {
    const env = buildEnvironment('create', request({ parameters: { hang: 'yes' } }), plugin);
    const child = spawn(plugin, ['create'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    running.push(() => child.kill('SIGKILL'));
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c));
    let signalled = false;
    child.stderr.on('data', (c: Buffer) => {
      stderr += c;
      // Once: a second SIGTERM ends the plugin at once, by convention.
      if (stderr.includes('waiting') && !signalled) signalled = child.kill('SIGTERM');
    });
    const code = await new Promise((resolve) => child.once('close', resolve));
    expect(code).toBe(1);
    expect(JSON.parse(stdout)).toEqual({ error: 'stopped (received SIGTERM); nothing was left behind' });
  });

  it('fails, rather than exiting 0 with no answer, when a handler waits on a promise nothing can settle', async () => {
    // Its fingerprint's signal fires at 800 ms; after that nothing is left to wait for.
    const stuck = join(work, 'plugins', 'stuck');
    await bundlePlugin({
      entry: fileURLToPath(new URL('./fixtures/sdk/stuck-plugin.ts', import.meta.url)),
      outfile: stuck,
    });
    const err = await execPlugin(stuck, 'fingerprint', {}, { timeoutMs: 10_000 }).catch((e: unknown) => e);
    expect(err).toMatchObject({
      code: 'PLUGIN_FAILED',
      exitCode: 1,
      pluginMessage: expect.stringMatching(/^fingerprint never finished/),
    });
  });
});

describe('a bundled plugin whose modules misbehave while loading', () => {
  const bundled = async (fixture: string, name: string) => {
    const outfile = join(work, 'plugins', name);
    await bundlePlugin({ entry: fileURLToPath(new URL(`./fixtures/sdk/${fixture}`, import.meta.url)), outfile });
    return outfile;
  };

  it('sends what its modules print at load time to stderr, keeping stdout for the response', async () => {
    const loud = await bundled('loud-plugin.ts', 'loud');
    const run = await execPlugin(loud, 'create', request());
    expect(run.stdout).toBe(`{"path":"${join(volumesDir, VOLUME_ID)}","bytes":0}\n`);
    expect(run.stderr).toMatch(/^loading the loud plugin\n\{ loading: true \}\n/);
  });

  it('redirects writes to a stdout stream the plugin saved while loading', async () => {
    const loud = await bundled('loud-plugin.ts', 'loud');
    const run = await execPlugin(loud, 'create', request());
    expect(run.stdout).toBe(`{"path":"${join(volumesDir, VOLUME_ID)}","bytes":0}\n`);
    expect(run.stderr).toContain('written through a stream saved at load time\n');
  });

  it('answers {"error"} with exit status 1 when a module throws while loading', async () => {
    const loud = await bundled('loud-plugin.ts', 'loud');
    const err = await execPlugin(loud, 'create', request({ volumeName: 'explode' })).catch((e: unknown) => e);
    expect(err).toMatchObject({
      code: 'PLUGIN_FAILED',
      exitCode: 1,
      pluginMessage: 'the plugin failed to load: configuration is broken',
    });
    expect((err as PluginError).stdout).not.toMatch(/\n\s+at /);
    expect((err as PluginError).stderr).toMatch(/\n\s+at /);
  });

  it('answers {"error"} with exit status 2 when the entry has no default export', async () => {
    const forgetful = await bundled('no-default.ts', 'forgetful');
    const err = await execPlugin(forgetful, 'fingerprint', {}, { timeoutMs: 10_000 }).catch((e: unknown) => e);
    expect(err).toMatchObject({
      code: 'PLUGIN_FAILED',
      exitCode: 2,
      pluginMessage: 'the plugin entry has no default export from definePlugin',
    });
  });
});
