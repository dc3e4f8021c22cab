import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  create,
  createRequest,
  deleteRequest,
  listTree,
  modeOf,
  newVolumeId,
  remove,
  useBuiltPlugin,
} from './support/mkdir-plugin.js';
import { tempDir, removeTempDir } from './support/kit.js';

const plugin = useBuiltPlugin();

let dir: string;
afterEach(async () => {
  await removeTempDir(dir);
});

describe('dhv-mkdir under concurrency', () => {
  it('16 concurrent creates of different volumes all succeed with the right paths and modes', async () => {
    dir = await tempDir();
    const volumesDir = join(dir, 'volumes'); // missing: all 16 race to create it too
    const ids = Array.from({ length: 16 }, newVolumeId);
    const results = await Promise.all(
      ids.map((id) => create(plugin.executable, createRequest(volumesDir, id, { parameters: { mode: '0750' } }))),
    );
    expect(results.map((r) => r.path)).toEqual(ids.map((id) => join(volumesDir, id)));
    for (const result of results) expect(await modeOf(result.path)).toBe(0o750);
    expect(await modeOf(volumesDir)).toBe(0o711);
    expect(await listTree(volumesDir)).toEqual([...ids].sort());
  });

  it('8 concurrent creates of the same volume all succeed with the same path and one directory', async () => {
    dir = await tempDir();
    const volumesDir = join(dir, 'volumes');
    await mkdir(volumesDir);
    const id = newVolumeId();
    const request = createRequest(volumesDir, id, { parameters: { mode: '20000770' } }); // setgid as Nomad's mkdir spells it (Go's bit)
    const results = await Promise.all(Array.from({ length: 8 }, () => create(plugin.executable, request)));
    for (const result of results) expect(result.path).toBe(join(volumesDir, id));
    expect(await modeOf(join(volumesDir, id))).toBe(0o2770);
    expect(await listTree(volumesDir)).toEqual([id]);
  });

  it('8 concurrent deletes of the same volume all succeed', async () => {
    dir = await tempDir();
    const volumesDir = join(dir, 'volumes');
    await mkdir(volumesDir);
    const id = newVolumeId();
    await create(plugin.executable, createRequest(volumesDir, id));
    await Promise.all(Array.from({ length: 8 }, () => remove(plugin.executable, deleteRequest(volumesDir, id))));
    expect(await listTree(volumesDir)).toEqual([]);
  });
});
