import { randomInt } from 'node:crypto';

/**
 * The seed of a randomised test. `$<envName>` replays a run; otherwise the pinned seed, so
 * every run of `npm test` tests the same cases, or a fresh random seed when
 * DHV_RANDOM_SEEDS=1 (as CI runs it). The seed is printed with the line that replays it.
 */
export function testSeed(envName: string, pinned: number, testFile: string): number {
  const given = process.env[envName];
  const seed =
    given !== undefined && given !== ''
      ? Number(given)
      : process.env.DHV_RANDOM_SEEDS === '1'
        ? randomInt(1, 2 ** 31)
        : pinned;
  if (!Number.isSafeInteger(seed)) throw new Error(`${envName} must be an integer, got "${given}"`);
  console.log(`${envName}=${seed}; replay with: ${envName}=${seed} npx vitest run ${testFile}`);
  return seed;
}
