import { open, readFile, truncate, writeFile } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { encodeJson } from '@dhv/sdk';
import { ClientState, type VolumeRecord } from './client-state.js';
import { sampleRecord } from '../../../../../test/support/volume-record.js';
import { AgentStore } from './store.js';
import { removeTempDir, tempDir } from '../../../../../test/support/kit.js';

const IDS = ['1e1d4540-14f9-2515-8502-24d46291717d', '2e1d4540-14f9-2515-8502-24d46291717d'];

const record = (id: string, name = `vol-${id.slice(0, 8)}`) => sampleRecord(id, { Name: name });

/** What a restart does with the store: read records and claims, write the claims, save the index. */
async function restartWith(dataDir: string): Promise<AgentStore> {
  const store = new AgentStore(dataDir);
  await store.sweep();
  const records = await store.records.list();
  await store.claims.replaceAll(
    new Map(records.map((r) => [r.CreateReq.Name, r.ID])),
    new Set(records.map((r) => r.ID)),
  );
  await store.saveIndex();
  return store;
}

let dataDir: string;
beforeEach(async () => {
  dataDir = await tempDir('index');
});
afterEach(async () => {
  await removeTempDir(dataDir);
});

describe('the state index', () => {
  it('gives the next restart every record and claim from one file while their folders are unchanged', async () => {
    const first = await restartWith(dataDir);
    await first.records.put(record(IDS[0]!));
    await first.records.put(record(IDS[1]!, 'x'.repeat(3000)));
    await restartWith(dataDir);

    const next = new AgentStore(dataDir);
    expect(next.index.section('records', next.layout.volumeRecords)).toBeDefined();
    expect(next.index.section('claims', next.layout.nameClaims)).toHaveLength(2);
    expect(await next.records.list()).toEqual([record(IDS[0]!), record(IDS[1]!, 'x'.repeat(3000))]);
    expect(await next.claims.all()).toEqual({ [`vol-${IDS[0]!.slice(0, 8)}`]: IDS[0], [IDS[1]!]: IDS[1] });
  });

  it('gives back from its table of shared values each record as its file holds it, alike or not', async () => {
    const first = await restartWith(dataDir);
    const registered: VolumeRecord = {
      ...record(IDS[1]!),
      HostPath: '/srv/elsewhere',
      CreateReq: { ...record(IDS[1]!).CreateReq, PluginID: '', Namespace: '', Parameters: null },
      Volume: { ...record(IDS[1]!).Volume, Namespace: 'prod', CapacityBytes: 2n ** 63n - 1n, Constraints: [] },
    };
    const records = [record(IDS[0]!), registered];
    for (const r of records) await first.records.put(r);
    await restartWith(dataDir);

    const next = new AgentStore(dataDir);
    expect(next.index.section('records', next.layout.volumeRecords)).toBeDefined();
    const fromIndex = await next.records.list();
    const fromFiles = await new ClientState(dataDir).list();
    expect(fromFiles).toEqual(records);
    // Key for key, in the order a full read of the files gives.
    expect(encodeJson(fromIndex)).toBe(encodeJson(fromFiles));
  });

  it('skips reading the claims when they are the very winners the last restart left, and only then', async () => {
    const first = await restartWith(dataDir);
    await first.records.put(record(IDS[0]!, 'x'));
    await first.records.put(record(IDS[1]!, 'y'));
    await restartWith(dataDir);
    const winners = new Map([
      ['x', IDS[0]!],
      ['y', IDS[1]!],
    ]);

    // Other winners on an unchanged folder: written.
    const swapped = new AgentStore(dataDir);
    await swapped.sweep();
    await swapped.claims.replaceAll(new Map([['x', IDS[1]!]]));
    await swapped.saveIndex();
    expect(await new AgentStore(dataDir).claims.all()).toEqual({ x: IDS[1] });

    // The same winners on a folder changed since (a create's claim): the claim is seen and dropped.
    await restartWith(dataDir);
    await new AgentStore(dataDir).claims.claim('z', IDS[0]!);
    const afterCreate = new AgentStore(dataDir);
    await afterCreate.sweep();
    await afterCreate.claims.replaceAll(winners);
    expect(await afterCreate.claims.all()).toEqual({ x: IDS[0], y: IDS[1] });
  });

  it('is not trusted for a folder changed since: a create, a delete or an update by any process is seen', async () => {
    const first = await restartWith(dataDir);
    await first.records.put(record(IDS[0]!));
    await restartWith(dataDir);

    await new AgentStore(dataDir).records.put(record(IDS[1]!));
    const afterCreate = new AgentStore(dataDir);
    expect(afterCreate.index.section('records', afterCreate.layout.volumeRecords)).toBeUndefined();
    expect((await afterCreate.records.list()).map((r) => r.ID)).toEqual(IDS);

    await restartWith(dataDir);
    await new AgentStore(dataDir).records.put(record(IDS[0]!, 'renamed'));
    expect((await new AgentStore(dataDir).records.list())[0]!.CreateReq.Name).toBe('renamed');

    await restartWith(dataDir);
    await new AgentStore(dataDir).records.remove(IDS[0]!);
    expect((await new AgentStore(dataDir).records.list()).map((r) => r.ID)).toEqual([IDS[1]]);
  });

  it('vouches for no record whose file changed in place since: a file cut short or rewritten is read again', async () => {
    const first = await restartWith(dataDir);
    for (const id of IDS) await first.records.put(record(id));
    await restartWith(dataDir);
    const file = first.records.fileOf(IDS[0]!);
    await truncate(file, 20);
    const cut = new AgentStore(dataDir);
    const { records, damaged } = await cut.records.scan();
    expect(records.map((r) => r.ID)).toEqual([IDS[1]]);
    expect(damaged.map((d) => [d.id, d.error.code])).toEqual([[IDS[0], 'STATE_CORRUPT']]);

    // Rewritten whole in place (same size, another name): the file is what counts.
    await restartWith(dataDir);
    await writeFile(file, encodeJson(record(IDS[0]!, 'vol-1e1d454X')) + '\n');
    const afterRestart = await restartWith(dataDir);
    expect((await afterRestart.records.list()).map((r) => r.CreateReq.Name)).toEqual(['vol-1e1d454X', 'vol-2e1d4540']);
    const text = encodeJson(record(IDS[0]!, 'vol-1e1d454Y')) + '\n';
    const handle = await open(file, 'r+');
    await handle.write(text, 0);
    await handle.close();
    expect((await new AgentStore(dataDir).records.list())[0]!.CreateReq.Name).toBe('vol-1e1d454Y');
  });

  it('spares a scan after creates the records it holds: only new or changed files are read, and it takes them in', async () => {
    const ids = Array.from({ length: 20 }, (_, i) => `${String(i).padStart(8, '0')}-14f9-2515-8502-24d46291717d`);
    await restartWith(dataDir);
    const creates = new AgentStore(dataDir);
    for (const id of ids.slice(0, 17)) await creates.records.put(record(id));
    // Creates since the restart: every file is new to the index, which takes them in.
    expect((await new AgentStore(dataDir).records.scan()).filesRead).toBe(17);

    const more = new AgentStore(dataDir);
    await more.records.put(record(ids[17]!));
    // Rewritten in place, as dhv never does: its file's stamp changed, so it is read again.
    const handle = await open(more.records.fileOf(ids[0]!), 'r+');
    await handle.write(encodeJson(record(ids[0]!, 'vol-0000000X')) + '\n', 0);
    await handle.close();
    await more.records.remove(ids[1]!);
    const { records, filesRead } = await new AgentStore(dataDir).records.scan();
    expect(filesRead).toBe(2);
    expect(records.map((r) => r.ID)).toEqual([ids[0], ...ids.slice(2, 18)]);
    expect(records[0]!.CreateReq.Name).toBe('vol-0000000X');
    expect(records).toEqual(await new ClientState(dataDir).list());
  });

  it('is ignored when it does not load, and written again by the next restart', async () => {
    const first = await restartWith(dataDir);
    await first.records.put(record(IDS[0]!));
    const store = await restartWith(dataDir);
    const text = await readFile(store.layout.stateIndex, 'utf8');
    await writeFile(store.layout.stateIndex, text.slice(0, text.length / 2));

    const next = new AgentStore(dataDir);
    expect(next.index.section('records', next.layout.volumeRecords)).toBeUndefined();
    expect((await next.records.list()).map((r) => r.ID)).toEqual([IDS[0]]);
    await restartWith(dataDir);
    expect(JSON.parse(await readFile(store.layout.stateIndex, 'utf8'))).toMatchObject({ Version: 3 });
  });
});
