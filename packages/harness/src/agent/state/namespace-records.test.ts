import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { stateLayout } from './layout.js';
import { NamespaceRecords } from './namespace-records.js';
import { removeTempDir, tempDir } from '../../../../../test/support/kit.js';

let dir: string;
let records: NamespaceRecords;
beforeEach(async () => {
  dir = await tempDir('namespaces');
  records = new NamespaceRecords(stateLayout(dir));
});
afterEach(() => removeTempDir(dir));

describe('namespace records', () => {
  it('has default with no file, and keeps one file per namespace applied', async () => {
    expect(await records.all()).toEqual([
      { Name: 'default', Description: 'Default shared namespace', CreateIndex: 1, ModifyIndex: 1 },
    ]);
    await records.put({ Name: 'b', Description: '', CreateIndex: 2, ModifyIndex: 2 });
    await records.put({ Name: 'A-1', Description: 'x', CreateIndex: 3, ModifyIndex: 3 });
    expect((await records.all()).map((n) => n.Name)).toEqual(['A-1', 'b', 'default']);
    expect((await readdir(stateLayout(dir).namespaces)).sort()).toEqual(['A-1.json', 'b.json']);
    await records.remove('b');
    expect(await records.get('b')).toBeUndefined();
  });

  it('never turns a name Nomad refuses into a path', async () => {
    await mkdir(join(dir, 'client'), { recursive: true });
    await writeFile(join(dir, 'client', 'secret.json'), JSON.stringify({ Name: 'x', Description: '' }));
    expect(await records.get('../secret')).toBeUndefined();
    await expect(records.put({ Name: '../secret', Description: '', CreateIndex: 2, ModifyIndex: 2 })).rejects.toThrow(
      /not valid/,
    );
  });

  it('names a damaged file and what to do', async () => {
    await mkdir(stateLayout(dir).namespaces, { recursive: true });
    const file = join(stateLayout(dir).namespaces, 'team.json');
    await writeFile(file, '{"Name": ');
    await expect(records.get('team')).rejects.toMatchObject({
      code: 'STATE_CORRUPT',
      message: expect.stringContaining(`namespace file ${file} is corrupt`),
    });
  });
});
