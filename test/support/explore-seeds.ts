import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'vitest';
import { CATALOGUE, runConformance } from '@dhv/harness';
import { HARNESS_FIXTURES } from './checkout-paths.js';
import { removeTempDir, tempDir } from './temp-dir.js';

/**
 * The correct stateful plugins the explorer must pass whatever the seed (issue 37: each
 * passes 20 seeds). `npm test` runs a few seeds of each (test/check-explore.test.ts), the
 * soak the twenty (test/soak/explore-seeds.test.ts).
 */
export const CORRECT_STATEFUL = ['registry-ok', 'slots-ok', 'name-guard-ok'];

const EXPLORE_CHECKS = CATALOGUE.filter((c) => c.area === 'explore').map((c) => c.id);
/** Seeds run at once for one plugin: each run is its own folder in the one volumes dir. */
const LANES = 2;

/**
 * Every explore check passes a copy of the stateful fixture `name` for seeds 1..`seeds`, two
 * random sequences each, however long they take. The systematic phase is the same for every
 * seed, so it runs with seed 1 only. Every seed runs the same sequences on any machine at any load.
 */
export async function expectPassesSeeds(name: string, seeds: number): Promise<void> {
  const dir = await tempDir(`explore-${name}`);
  try {
    const plugin = join(dir, name);
    await copyFile(join(HARNESS_FIXTURES, 'stateful', name), plugin);
    const volumesDir = join(dir, 'runs');
    const lanes = Array.from({ length: LANES }, async (_, lane) => {
      for (let seed = lane + 1; seed <= seeds; seed += LANES) {
        const systematic = seed === 1;
        const report = await runConformance(plugin, { only: ['explore'], seed, runs: 2, systematic, volumesDir });
        const explored = report.results.filter((r) => r.area === 'explore');
        const bad = explored.filter((r) => r.status !== 'pass');
        expect(
          bad.map((r) => `seed ${seed}: ${r.id}: ${r.reason ?? ''}`),
          report.stopped,
        ).toEqual([]);
        expect(explored).toHaveLength(EXPLORE_CHECKS.length);
        const said = explored.flatMap((r) => r.notes).join(' ');
        expect(said.includes('systematic scenarios, one per defect class'), said).toBe(systematic);
      }
    });
    // Both lanes end before the folder goes, a failed one too.
    const failed = (await Promise.allSettled(lanes)).find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
  } finally {
    await removeTempDir(dir);
  }
}
