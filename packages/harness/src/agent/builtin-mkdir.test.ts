import { mkdtemp, rm, stat, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PluginError } from '@dhv/sdk/client';
import { builtinMkdirCreate, builtinMkdirDelete } from './builtin-mkdir.js';

const ID = '1e1d4540-14f9-2515-8502-24d46291717d';

describe("the built-in mkdir plugin behaves as Nomad's", () => {
  let volumesDir: string;
  beforeEach(async () => {
    volumesDir = await mkdtemp(join(tmpdir(), 'dhv-builtin-'));
  });
  afterEach(async () => {
    await rm(volumesDir, { recursive: true, force: true });
  });

  it('makes <volumes dir>/<id> with mode 0700 whatever the umask, and reports 0 bytes', async () => {
    const old = process.umask(0o077);
    try {
      const result = await builtinMkdirCreate({ volumesDir, volumeId: ID, parameters: { mode: '0755' } });
      expect(result).toEqual({ path: join(volumesDir, ID), bytes: 0n });
      expect((await stat(result.path)).mode & 0o7777).toBe(0o755);
    } finally {
      process.umask(old);
    }
    await builtinMkdirDelete({ volumesDir, volumeId: ID });
    const fresh = await builtinMkdirCreate({ volumesDir, volumeId: ID, parameters: null });
    expect((await stat(fresh.path)).mode & 0o7777).toBe(0o700);
  });

  it('leaves an existing path untouched', async () => {
    const path = join(volumesDir, ID);
    await mkdir(path, { mode: 0o750 });
    await writeFile(join(path, 'data'), 'kept');
    await builtinMkdirCreate({ volumesDir, volumeId: ID, parameters: { mode: '0777' } });
    expect((await stat(path)).mode & 0o7777).toBe(0o750);
    expect((await stat(join(path, 'data'))).size).toBe(4);
  });

  it('refuses an unknown parameter or a bad value, naming it, before touching the disk', async () => {
    await expect(builtinMkdirCreate({ volumesDir, volumeId: ID, parameters: { size: '1G' } })).rejects.toThrow(/unknown parameter "size"/);
    await expect(builtinMkdirCreate({ volumesDir, volumeId: ID, parameters: { mode: 'rwx' } })).rejects.toThrow(/"mode".*"rwx"/);
    await expect(builtinMkdirCreate({ volumesDir, volumeId: ID, parameters: { uid: 'root' } })).rejects.toBeInstanceOf(PluginError);
    await expect(stat(join(volumesDir, ID))).rejects.toThrow(/ENOENT/);
  });

  it('deletes recursively, and a missing path is success', async () => {
    await builtinMkdirCreate({ volumesDir, volumeId: ID, parameters: null });
    await writeFile(join(volumesDir, ID, 'f'), 'x');
    await builtinMkdirDelete({ volumesDir, volumeId: ID });
    await expect(stat(join(volumesDir, ID))).rejects.toThrow(/ENOENT/);
    await builtinMkdirDelete({ volumesDir, volumeId: ID });
  });
});
