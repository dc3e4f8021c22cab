import { execFile } from 'node:child_process';
import { copyFile, mkdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { discoverPlugins, execPlugin } from '@dhv/sdk/client';
import { createRequest, deleteRequest, newVolumeId, MKDIR_PACKAGE_DIR } from './support/mkdir-plugin.js';
import { tempDir, removeTempDir, builtPlugin } from './support/kit.js';

const run = promisify(execFile);
const BUILT = join(MKDIR_PACKAGE_DIR, 'dist', 'dhv-mkdir');
const packageVersion = async () =>
  (JSON.parse(await readFile(join(MKDIR_PACKAGE_DIR, 'package.json'), 'utf8')) as { version: string }).version;

/** What `npm run build` leaves in packages/plugin-mkdir/dist, and that copying that one file is the whole installation. */
describe('dhv-mkdir packaging', () => {
  beforeAll(() => {
    // `npm test` builds first; on a tree without the bundle this runs the package's build
    // script. Never rebuilt when present: other test files run this very file meanwhile.
    expect(builtPlugin('dhv-mkdir')).toBe(BUILT);
  }, 120_000);

  let dir: string | undefined;
  afterEach(async () => {
    await removeTempDir(dir);
    dir = undefined;
  });

  it('is one executable file whose launcher finds node by absolute paths (the agent gives no PATH)', async () => {
    const text = await readFile(BUILT, 'utf8');
    expect(text.split('\n').slice(0, 2)).toEqual([
      '#!/bin/sh',
      expect.stringContaining(`for n in '${process.execPath}' `),
    ]);
    expect((await stat(BUILT)).mode & 0o111).toBe(0o111);
    expect(text).not.toMatch(/require\(["']zod["']\)|require\(["']check-disk-space["']\)|require\(["']@dhv\/sdk/);
  });

  it('runs in place, inside this type: module package', async () => {
    const result = await execPlugin(BUILT, 'fingerprint', {}, { pluginId: 'dhv-mkdir' });
    expect(result.rawVersion).toBe(await packageVersion());
  });

  it('works after copying only that file into a plugin directory', async () => {
    dir = await tempDir();
    const pluginDir = join(dir, 'host_volume_plugins');
    await mkdir(pluginDir);
    const installed = join(pluginDir, 'dhv-mkdir');
    await copyFile(BUILT, installed);
    await run('/bin/chmod', ['0755', installed]);
    const discovery = await discoverPlugins(pluginDir);
    expect(discovery.plugins.map((p) => [p.id, p.version])).toContainEqual(['dhv-mkdir', await packageVersion()]);
    const volumesDir = join(dir, 'host_volumes');
    const id = newVolumeId();
    const created = await execPlugin(
      installed,
      'create',
      createRequest(volumesDir, id, { parameters: { mode: '0755' } }),
    );
    expect(created.path).toBe(join(volumesDir, id));
    await execPlugin(installed, 'delete', deleteRequest(volumesDir, id, { createdPath: created.path }));
    await expect(stat(created.path)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
