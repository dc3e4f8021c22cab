import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { bundlePlugin } from '@dhv/sdk/build';
import { removeTempDir, tempDir } from './support/temp-dir.js';

const ENTRY = fileURLToPath(new URL('./fixtures/sdk/counted-plugin.ts', import.meta.url));
const run = promisify(execFile);

let dir: string;
beforeAll(async () => {
  dir = await tempDir('launcher-fingerprint');
});
afterAll(async () => {
  await removeTempDir(dir);
});

/** Runs the bundled plugin as the agent does (no PATH, the operation in argv and DHV_OPERATION) and counts node's loads of it. */
async function call(plugin: string, operation: string, env: Record<string, string> = {}) {
  const loads = join(dir, `loads-${Math.random().toString(36).slice(2)}`);
  const { stdout } = await run(plugin, [operation], {
    env: { DHV_OPERATION: operation, COUNTED_PLUGIN_LOADS: loads, ...env },
  }).catch((err: { stdout: string }) => err);
  const loaded = await readFile(loads, 'utf8').then(
    (text) => text.split('\n').filter(Boolean).length,
    () => 0,
  );
  return { stdout, loaded };
}

describe("a bundled plugin's launcher", () => {
  it("answers the agent's fingerprint itself, exactly as node would, when the version alone decides it", async () => {
    const outfile = join(dir, 'counted');
    const result = await bundlePlugin({ entry: ENTRY, outfile });
    expect(result.fingerprintBy).toBe('launcher');
    expect(await call(outfile, 'fingerprint')).toEqual({ stdout: '{"version":"1.2.3"}\n', loaded: 0 });
    // The same answer from node, when the launcher is not the one to give it.
    const fromNode = await run(process.execPath, [outfile, 'fingerprint'], { env: { DHV_OPERATION: 'fingerprint' } });
    expect(fromNode.stdout).toBe('{"version":"1.2.3"}\n');
    // Every other call still reaches node, and gets node's answer: another operation, or a fingerprint the agent never makes.
    expect(await call(outfile, 'create')).toMatchObject({
      stdout: expect.stringMatching(/invalid create request/),
      loaded: 1,
    });
    expect(await call(outfile, 'fingerprint', { DHV_OPERATION: 'create' })).toMatchObject({
      stdout: expect.stringMatching(/DHV_OPERATION is \\"create\\" but the operation argument is \\"fingerprint\\"/),
      loaded: 1,
    });
  });

  it('leaves fingerprint to node when the plugin has its own fingerprint handler', async () => {
    const outfile = join(dir, 'counted-own');
    const entry = fileURLToPath(new URL('./fixtures/sdk/counted-own-fingerprint-plugin.ts', import.meta.url));
    expect((await bundlePlugin({ entry, outfile })).fingerprintBy).toBe('node');
    expect(await call(outfile, 'fingerprint')).toEqual({
      stdout: '{"version":"1.2.4"}\n',
      loaded: 1,
    });
  });

  it("leaves fingerprint to node when the module does not load under the agent's environment, so the failure shows at fingerprint", async () => {
    const outfile = join(dir, 'needs-path');
    const entry = fileURLToPath(new URL('./fixtures/sdk/needs-path-plugin.ts', import.meta.url));
    expect((await bundlePlugin({ entry, outfile })).fingerprintBy).toBe('node');
    const { stdout } = await call(outfile, 'fingerprint');
    expect(JSON.parse(stdout)).toEqual({ error: 'the plugin failed to load: PATH is not set' });
  });

  it('leaves fingerprint to node with a fixed #! line, which runs no shell', async () => {
    const outfile = join(dir, 'counted-fixed');
    const result = await bundlePlugin({ entry: ENTRY, outfile, launcher: 'fixed' });
    expect(result.fingerprintBy).toBe('node');
    expect(await call(outfile, 'fingerprint')).toEqual({ stdout: '{"version":"1.2.3"}\n', loaded: 1 });
  });
});
