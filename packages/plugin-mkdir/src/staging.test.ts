import { lstat, mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { acquireVolumeLock } from '@dhv/sdk/plugin';
import { buildEnvironment } from '@dhv/sdk/client';
import { lockFileFor, stagingPathFor } from './lock.js';
import plugin from './plugin.js';
import { removeTestDir } from './testing/test-dir.js';
import { tempDir } from '../../../test/support/kit.js';

let dir: string | undefined;
afterEach(async () => {
  await removeTestDir(dir);
  dir = undefined;
});

const VOLUME_ID = '7d1e2f4e-8a6b-4c3d-9e0f-112233445577';

async function volumes(): Promise<string> {
  dir = await tempDir('mkdir-staging');
  const volumesDir = join(dir, 'volumes');
  await mkdir(volumesDir);
  return volumesDir;
}

const run = (operation: 'create' | 'delete', volumesDir: string) =>
  plugin.invoke({
    argv: [operation],
    env: buildEnvironment(
      operation,
      { volumesDir, volumeId: VOLUME_ID, volumeName: 'v', nodeId: 'n', parameters: { mode: '0750' } },
      '/plugins/dhv-mkdir',
    ),
  });

describe('dhv-mkdir builds a new volume under another name and renames it into place', () => {
  it('a create finds what a killed create left under the staging name, removes it, and makes the volume afresh', async () => {
    const volumesDir = await volumes();
    const staging = stagingPathFor(join(volumesDir, VOLUME_ID));
    await mkdir(staging, { mode: 0o700 });
    await writeFile(join(staging, 'stray'), 'x');
    const result = await run('create', volumesDir);
    expect(result.exitCode, result.stdout).toBe(0);
    expect((await lstat(join(volumesDir, VOLUME_ID))).mode & 0o7777).toBe(0o750);
    expect(await readdir(join(volumesDir, VOLUME_ID))).toEqual([]);
    expect(await readdir(volumesDir)).toEqual([VOLUME_ID]);
  });

  it('delete removes a staging directory a killed create left, as well as the volume', async () => {
    const volumesDir = await volumes();
    expect((await run('create', volumesDir)).exitCode).toBe(0);
    await mkdir(stagingPathFor(join(volumesDir, VOLUME_ID)));
    const result = await run('delete', volumesDir);
    expect(result.exitCode, result.stdout).toBe(0);
    expect(await readdir(volumesDir)).toEqual([]);
  });

  it('reports an existing volume without waiting for its lock (the restore after an agent restart)', async () => {
    const volumesDir = await volumes();
    expect((await run('create', volumesDir)).exitCode).toBe(0);
    const release = await acquireVolumeLock(lockFileFor(join(volumesDir, VOLUME_ID)));
    try {
      const timeout = new Promise<'waited'>((resolve) => setTimeout(() => resolve('waited'), 20_000).unref());
      const result = await Promise.race([run('create', volumesDir), timeout]);
      expect(result).not.toBe('waited');
      if (result !== 'waited') {
        expect(result.exitCode, result.stdout).toBe(0);
        expect(JSON.parse(result.stdout).path).toBe(join(volumesDir, VOLUME_ID));
      }
    } finally {
      await release();
    }
  });
});
