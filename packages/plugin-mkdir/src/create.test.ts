import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { buildEnvironment } from '@dhv/sdk/client';
import plugin from './plugin.js';
import { removeTestDir } from './testing/test-dir.js';
import { tempDir } from '../../../test/support/kit.js';

// The free-space query stubbed, so capacity decisions can be checked in-process for any
// size; the tests in test/ check the real query on real filesystems.
const free = vi.hoisted(() => ({ bytes: 0n }));
vi.mock('./capacity.js', async (importOriginal) => ({
  ...(await importOriginal<typeof import('./capacity.js')>()),
  freeSpace: async () => free.bytes,
}));

let dir: string | undefined;
afterEach(async () => {
  await removeTestDir(dir);
  dir = undefined;
});

const VOLUME_ID = '5c1d2f4e-8a6b-4c3d-9e0f-112233445566';

async function invokeCreate(capacityMinBytes: bigint, capacityMaxBytes: bigint) {
  dir = await tempDir('mkdir-unit');
  const volumesDir = join(dir, 'volumes');
  await mkdir(volumesDir);
  const env = buildEnvironment(
    'create',
    { volumesDir, volumeId: VOLUME_ID, volumeName: 'v', nodeId: 'n', capacityMinBytes, capacityMaxBytes },
    '/plugins/dhv-mkdir',
  );
  return { volumesDir, result: await plugin.invoke({ argv: ['create'], env }) };
}

describe('create with a stubbed free-space query', () => {
  it('reports the free space as bytes', async () => {
    free.bytes = 123_456_789_000n;
    const { result, volumesDir } = await invokeCreate(0n, 0n);
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ path: join(volumesDir, VOLUME_ID), bytes: 123456789000 });
  });

  it('writes bytes above 2^53 exactly', async () => {
    free.bytes = 2n ** 60n + 1n;
    const { result } = await invokeCreate(0n, 0n);
    expect(result.stdout).toContain('"bytes":1152921504606846977');
  });

  it('caps bytes at capacity_max', async () => {
    free.bytes = 10n ** 12n;
    const { result } = await invokeCreate(10n ** 9n, 5n * 10n ** 9n);
    expect(JSON.parse(result.stdout).bytes).toBe(5_000_000_000);
  });

  it('fails below capacity_min with both sizes in human units, and makes nothing', async () => {
    free.bytes = 1536n * 1024n * 1024n; // 1.5 GiB
    const { result, volumesDir } = await invokeCreate(50n * 10n ** 9n, 0n);
    expect(result.exitCode).toBe(1);
    expect(JSON.parse(result.stdout).error).toContain('needs 47 GiB (50000000000 bytes)');
    expect(JSON.parse(result.stdout).error).toContain('has 1.5 GiB (1610612736 bytes) free');
    expect(await readdir(volumesDir)).toEqual([]);
  });
});
