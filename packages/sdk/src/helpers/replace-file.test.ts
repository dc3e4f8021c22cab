import { mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PARTIAL_PREFIX, partialFileWriter, replaceFile, replaceFileSync } from './replace-file.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'dhv-replace-file-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe.each([
  ['replaceFile', replaceFile],
  ['replaceFileSync', async (...args: Parameters<typeof replaceFileSync>) => replaceFileSync(...args)],
] as const)('%s', (_name, replace) => {
  it('replaces the file whole with the mode asked, and leaves nothing else beside it', async () => {
    const path = join(dir, 'state.json');
    await writeFile(path, 'old text that is longer than the new\n');
    await replace(path, 'new\n', { mode: 0o640, durable: true });
    expect(await readFile(path, 'utf8')).toBe('new\n');
    await replace(join(dir, 'made.json'), 'made\n', { mode: 0o640 });
    expect((await stat(join(dir, 'made.json'))).mode & 0o777).toBe(0o640 & ~process.umask());
    expect((await readdir(dir)).sort()).toEqual(['made.json', 'state.json']);
  });

  it('leaves no partial file when the rename fails', async () => {
    const folder = join(dir, 'a-folder');
    await mkdir(folder);
    // A file cannot be renamed over a folder: the rename fails after the partial file is written beside it.
    await expect(replace(folder, 'new\n')).rejects.toMatchObject({ code: 'EISDIR' });
    expect(await readdir(dir)).toEqual(['a-folder']);
  });
});

describe('partialFileWriter', () => {
  it("names the PID that wrote a partial file, and nothing for another file's name", () => {
    expect(partialFileWriter(`${PARTIAL_PREFIX}4711-0a1b2c3d-state.json.partial`)).toBe(4711);
    expect(partialFileWriter('state.json')).toBeUndefined();
    expect(partialFileWriter(`${PARTIAL_PREFIX}0-0a1b2c3d-state.json.partial`)).toBeUndefined();
  });
});
