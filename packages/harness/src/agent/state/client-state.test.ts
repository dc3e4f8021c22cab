import { mkdir, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ClientState, type VolumeRecord } from './client-state.js';
import { sampleRecord as sample } from '../../../../../test/support/volume-record.js';
import { removeTempDir, tempDir } from '../../../../../test/support/kit.js';

const ID = '1e1d4540-14f9-2515-8502-24d46291717d';
const sampleRecord = (id = ID, overrides: Partial<VolumeRecord['CreateReq']> = {}) => sample(id, overrides);

let dir: string;
let state: ClientState;
beforeEach(async () => {
  dir = await tempDir('state');
  state = new ClientState(dir);
});
afterEach(async () => {
  await removeTempDir(dir);
});

describe('client state', () => {
  it("keeps each volume as {ID, HostPath, CreateReq} with Nomad's field names, int64 capacities exact", async () => {
    await state.put(sampleRecord());
    expect(await state.get(ID)).toEqual(sampleRecord());
    expect(await state.list()).toEqual([sampleRecord()]);
    expect(await readdir(state.dir)).toEqual([`${ID}.json`]); // no temporary file left
  });

  it('forgets a removed volume, and removing one that is gone is fine', async () => {
    await state.put(sampleRecord());
    await state.remove(ID);
    await state.remove(ID);
    expect(await state.list()).toEqual([]);
  });

  it('ignores a temporary file a killed writer left, and reports it as stale once the writer is gone', async () => {
    await state.put(sampleRecord());
    const leftover = join(state.dir, `.tmp-999999999-abcd-${ID}.json`);
    await writeFile(leftover, '{"ID": "half a rec');
    expect(await state.list()).toEqual([sampleRecord()]);
    expect(await state.staleTempFiles()).toEqual([leftover]);
  });

  it('sets a corrupt file aside with an error naming it and the fix, loads every other record, and never rewrites it', async () => {
    await state.put(sampleRecord());
    const other = '2b2b2b2b-14f9-2515-8502-24d46291717d';
    await writeFile(state.fileOf(other), '{"ID": "not json');
    const { records, damaged } = await state.scan();
    expect(records).toEqual([sampleRecord()]);
    expect(damaged).toEqual([{ id: other, file: state.fileOf(other), error: expect.any(Error) }]);
    expect(damaged[0]!.error).toMatchObject({ code: 'STATE_CORRUPT', details: { file: state.fileOf(other) } });
    expect(damaged[0]!.error.message).toMatch(/is corrupt .*repair the file, or move it out/);
    expect(await state.list()).toEqual([sampleRecord()]);
    await expect(state.get(other)).rejects.toMatchObject({ code: 'STATE_CORRUPT' });
  });

  it('sets aside a record it cannot read, naming it', async () => {
    await state.put(sampleRecord());
    const other = '4d4d4d4d-14f9-2515-8502-24d46291717d';
    await mkdir(state.fileOf(other)); // EISDIR: unreadable, even for root
    const { records, damaged } = await state.scan();
    expect(records).toEqual([sampleRecord()]);
    expect(damaged[0]!.error).toMatchObject({ code: 'STATE_UNREADABLE', details: { file: state.fileOf(other) } });
  });

  it('keeps every parameter key, __proto__ included, through the file and the schema', async () => {
    const Parameters = JSON.parse('{"__proto__": "x", "constructor": "y"}') as Record<string, string>;
    await state.put(sampleRecord(ID, { Parameters }));
    expect(Object.keys((await state.get(ID))!.CreateReq.Parameters!)).toEqual(['__proto__', 'constructor']);
    expect((await state.list())[0]!.CreateReq.Parameters).toEqual(Parameters);
  });

  it('keeps a negative size a plugin answered (Go decodes any int64)', async () => {
    const negative = { ...sampleRecord(), Volume: { ...sampleRecord().Volume, CapacityBytes: -(2n ** 63n) } };
    await state.put(negative);
    expect(await state.get(ID)).toEqual(negative);
    expect(await state.list()).toEqual([negative]);
  });

  it('treats a record that is valid JSON but not a volume, or holds another ID, as corrupt', async () => {
    await state.put(sampleRecord());
    await writeFile(state.fileOf(ID), JSON.stringify({ ID, HostPath: '/x' }));
    await expect(state.get(ID)).rejects.toMatchObject({
      code: 'STATE_CORRUPT',
      message: expect.stringMatching(/CreateReq/),
    });
    const other = '3c3c3c3c-14f9-2515-8502-24d46291717d';
    await state.put(sampleRecord(other));
    await rm(state.fileOf(ID));
    await writeFile(state.fileOf(ID), (await import('node:fs')).readFileSync(state.fileOf(other)));
    expect((await state.scan()).damaged[0]?.error.message).toMatch(/holds volume 3c3c3c3c/);
  });

  it('never reads through a record that is a symlink: the error names the link, and not one byte of what it points at', async () => {
    await state.put(sampleRecord());
    const secret = join(dir, 'secret');
    await writeFile(secret, 'root:$6$not-for-the-error-text$\n');
    const other = '5e5e5e5e-14f9-2515-8502-24d46291717d';
    await symlink(secret, state.fileOf(other));
    const failure = (await state.scan()).damaged[0]?.error;
    expect(failure).toMatchObject({ code: 'STATE_UNREADABLE', details: { file: state.fileOf(other) } });
    expect(failure?.message).toMatch(/move it out of/);
    expect(`${failure?.message} ${JSON.stringify(failure?.details)}`).not.toMatch(/not-for-the-error-text|root:/);
  });
});
