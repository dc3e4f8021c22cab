import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { VolumeRecord } from './client-state.js';
import { stateLayout } from './layout.js';
import { VolumeDisks } from './volume-disks.js';
import { removeTempDir, tempDir } from '../../../../../test/support/kit.js';

const IDS = ['1e1d4540-14f9-2515-8502-24d46291717d', '2f2e5651-25fa-3626-9613-35e57302828e'] as const;

let dataDir: string;
let volumesDir: string;
beforeEach(async () => {
  dataDir = await tempDir('volume-disks');
  volumesDir = join(dataDir, 'volumes');
  await mkdir(volumesDir);
});
afterEach(async () => {
  await removeTempDir(dataDir);
});

const recordOf = (id: string) => ({ ID: id, HostPath: join(volumesDir, id) }) as VolumeRecord;

describe("a restore's disk records", () => {
  it('records each volume met for the first time once, at the end, and then knows it', async () => {
    const disks = new VolumeDisks(dataDir);
    const first = await disks.forRestore(volumesDir);
    for (const id of IDS) {
      await mkdir(join(volumesDir, id));
      first.restored(id, join(volumesDir, id));
    }
    expect(await readdir(stateLayout(dataDir).volumeDisks).catch(() => [])).toEqual([]);
    await first.finish();
    const files = (await readdir(stateLayout(dataDir).volumeDisks)).sort();
    expect(files).toEqual(IDS.map((id) => `${id}.json`).sort());
    const disk = await disks.get(IDS[0]);
    expect(disk).toMatchObject({ VolumesDir: volumesDir, VolumeMounted: false });
    expect(disk?.Device).toMatch(/^\d+:\d+$/);

    const again = await disks.forRestore(volumesDir);
    expect(again.movedNote(recordOf(IDS[0]))).toBeUndefined();
    const before = await readFile(join(stateLayout(dataDir).volumeDisks, `${IDS[0]}.json`), 'utf8');
    again.restored(IDS[0], join(volumesDir, IDS[0]));
    await again.finish();
    expect(await readFile(join(stateLayout(dataDir).volumeDisks, `${IDS[0]}.json`), 'utf8')).toBe(before);
  });

  it('notes a volume created on another disk than the volumes dir is on now, for the built-in (the plugins refuse it themselves)', async () => {
    const dir = stateLayout(dataDir).volumeDisks;
    await mkdir(dir, { recursive: true });
    const elsewhere = { VolumesDir: volumesDir, Device: '999:999', DiskMountPoint: '/mnt/gone', VolumeMounted: false };
    await writeFile(join(dir, `${IDS[0]}.json`), JSON.stringify(elsewhere));
    await writeFile(join(dir, `${IDS[1]}.json`), 'not json');
    const disks = await new VolumeDisks(dataDir).forRestore(volumesDir);
    expect(disks.movedNote(recordOf(IDS[0]))).toMatch(/^its folder now lives on another filesystem/);
    expect(disks.movedNote(recordOf(IDS[0]))).toContain('/mnt/gone (device 999:999)');
    // A record that does not load is no record: nothing noted, and written again at the end.
    expect(disks.movedNote(recordOf(IDS[1]))).toBeUndefined();
    disks.restored(IDS[1], join(volumesDir, IDS[1]));
    await disks.finish();
    expect(JSON.parse(await readFile(join(dir, `${IDS[1]}.json`), 'utf8'))).toMatchObject({ VolumesDir: volumesDir });
  });
});
