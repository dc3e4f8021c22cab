import { spawn } from 'node:child_process';
import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readStateFile, updateStateFile } from './state-file.js';
import { PluginFailure } from '../helpers/errors.js';

let dir: string;
let path: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'dhv-state-file-'));
  path = join(dir, 'registry.json');
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('a plugin state file', () => {
  it('starts with nothing, then holds what each update wrote, mode 0600', async () => {
    expect(await readStateFile(path)).toBeUndefined();
    await updateStateFile<{ volumes: string[] }>(path, (s) => ({ volumes: [...(s?.volumes ?? []), 'a'] }));
    const written = await updateStateFile<{ volumes: string[] }>(path, (s) => ({ volumes: [...s!.volumes, 'b'] }));
    expect(written).toEqual({ volumes: ['a', 'b'] });
    expect(await readStateFile(path)).toEqual({ volumes: ['a', 'b'] });
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });

  it('loses no update when 8 processes change it at once', async () => {
    await writeFile(path, '{"count": 0}\n');
    // The built SDK, as a plugin process runs it (npm test builds first).
    const script = `import { updateStateFile } from '@dhv/sdk/host';
for (let i = 0; i < 5; i++) await updateStateFile(process.argv[1], (s) => ({ count: s.count + 1 }));`;
    const runs = Array.from(
      { length: 8 },
      () =>
        new Promise<number | null>((resolve) =>
          spawn(process.execPath, ['--input-type=module', '-e', script, path], {
            cwd: new URL('.', import.meta.url).pathname,
            stdio: 'ignore',
          }).on('close', resolve),
        ),
    );
    expect(await Promise.all(runs)).toEqual(Array(8).fill(0));
    expect(await readStateFile(path)).toEqual({ count: 40 });
  });

  it('keeps the state as it was when the change throws, and leaves no partial file', async () => {
    await updateStateFile(path, () => ({ v: 1 }));
    await expect(
      updateStateFile(path, () => {
        throw new Error('no');
      }),
    ).rejects.toThrow('no');
    expect(await readStateFile(path)).toEqual({ v: 1 });
    expect((await readdir(dir)).filter((f) => f.endsWith('.partial'))).toEqual([]);
  });

  it('says how to recover a file that is not JSON', async () => {
    await writeFile(path, '{"half": ');
    const err = await readStateFile(path).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PluginFailure);
    expect((err as PluginFailure).message).toMatch(/^the state file .* is not JSON .*; move it aside/);
  });
});
