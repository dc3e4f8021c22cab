import { randomUUID } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAsDhv } from '../support/run-as-dhv.js';
import {
  loopDevices,
  skipUnless,
  tool,
  builtPlugin,
  loopDeviceNamesBackedBelow,
  tempDir,
  mountPointsAtOrBelow,
  removeTempDir,
} from '../support/kit.js';
import { mapLimit } from '../support/map-limit.js';
import { soakRequested } from '../support/soak.js';
import { median } from '../support/median.js';

/**
 * The soak: 100 create/delete cycles of dhv-loopback, 8 at a time, through the
 * SDK's client as an agent runs them, and 50 of one volume one after another. Nothing may be left (loop device, mount, image,
 * directory), and the time per cycle must not grow: the first and last quarters'
 * medians are printed, and only a generous sanity bound is asserted.
 * It runs only when asked (DHV_SOAK=1), so `npm test` stays quick: `npm run test:soak`
 * (DHV_SOAK=1 vitest run test/soak), which .ci/run calls before `npm test`.
 */

const CYCLES = Number(process.env.DHV_SOAK_CYCLES ?? 100);
const PARALLEL = 8;
const MiB = 1024 * 1024;

describe.skipIf(
  !soakRequested ||
    skipUnless('the dhv-loopback soak', loopDevices(), tool('mkfs.ext4', 'e2fsprogs'), tool('mkfs.xfs', 'xfsprogs')),
)(`dhv-loopback soak: ${CYCLES} create/delete cycles, ${PARALLEL} in parallel`, () => {
  let sandbox: string;
  let volumesDir: string;
  let executable: string;

  beforeAll(async () => {
    executable = builtPlugin('dhv-loopback');
    sandbox = await tempDir('soak');
    volumesDir = join(sandbox, 'volumes');
  }, 120_000);

  afterAll(async () => {
    await removeTempDir(sandbox);
  });

  it('leaves no loop device, mount, image or directory, and a cycle takes as long at the end as at the start', async () => {
    const cycles = Array.from(
      { length: CYCLES },
      (_, i) => `${(0x10000000 + i).toString(16)}-0000-4000-8000-${String(i).padStart(12, '0')}`,
    );
    const started = performance.now();
    const failures: string[] = [];
    // Every cycle settles, failed or not, so nothing is still running when the checks (and cleanup) start.
    const durations = await mapLimit(cycles, PARALLEL, async (volumeId, i) => {
      const t0 = performance.now();
      const request = { volumesDir, volumeName: `soak-${i}`, volumeId, nodeId: 'soak-node' };
      // ext4 and xfs in turn; xfs will not make a filesystem under 300 MB (sparse, so cheap).
      const xfs = i % 2 === 1;
      try {
        const created = await runAsDhv(executable, 'create', {
          ...request,
          capacityMinBytes: (xfs ? 320 : 16 + (i % 4) * 8) * MiB,
          parameters: xfs ? { fs: 'xfs' } : null,
        });
        if (created.path !== join(volumesDir, volumeId)) failures.push(`cycle ${i}: create returned ${created.path}`);
        await runAsDhv(executable, 'delete', { ...request, createdPath: created.path });
      } catch (err) {
        failures.push(`cycle ${i}: ${(err as Error).message}`);
      }
      return performance.now() - t0;
    });
    const totalSeconds = (performance.now() - started) / 1000;

    expect(failures).toEqual([]);

    expect(loopDeviceNamesBackedBelow(sandbox)).toEqual([]);
    expect(mountPointsAtOrBelow(sandbox)).toEqual([]);
    const left = await readdir(volumesDir);
    // The plugin's hidden image folder may stay, empty: nothing of any volume is left in it.
    expect(left.filter((n) => n !== '.dhv-loopback')).toEqual([]);
    if (left.includes('.dhv-loopback')) expect(await readdir(join(volumesDir, '.dhv-loopback'))).toEqual([]);

    const quarter = Math.max(1, Math.floor(CYCLES / 4));
    const first = median(durations.slice(0, quarter));
    const last = median(durations.slice(-quarter));
    console.log(
      `soak: ${CYCLES} cycles, ${PARALLEL} in parallel, ${totalSeconds.toFixed(1)} s in all; ` +
        `median cycle ${first.toFixed(0)} ms in the first quarter, ${last.toFixed(0)} ms in the last (ratio ${(last / first).toFixed(2)})`,
    );
    // Only a sanity bound: a leak that made every cycle slower would show far beyond it.
    expect(last).toBeLessThan(first * 5 + 2_000);
  }, 900_000);

  // npm test's loopback-volumes repeats one volume 5 times; here, the breadth.
  it('leaves nothing behind after 50 create/delete cycles of the same volume, one after another', async () => {
    const sameDir = join(sandbox, 'same-volume');
    const request = { volumesDir: sameDir, volumeName: 'soak-same', volumeId: randomUUID(), nodeId: 'soak-node' };
    for (let cycle = 0; cycle < 50; cycle++) {
      const created = await runAsDhv(executable, 'create', { ...request, capacityMinBytes: 32 * MiB });
      expect(created.path).toBe(join(sameDir, request.volumeId));
      await runAsDhv(executable, 'delete', { ...request, createdPath: created.path });
    }
    expect(loopDeviceNamesBackedBelow(sameDir)).toEqual([]);
    expect(mountPointsAtOrBelow(sameDir)).toEqual([]);
    const left = await readdir(sameDir);
    expect(left.filter((n) => n !== '.dhv-loopback')).toEqual([]);
    if (left.includes('.dhv-loopback')) expect(await readdir(join(sameDir, '.dhv-loopback'))).toEqual([]);
  }, 300_000);
});
