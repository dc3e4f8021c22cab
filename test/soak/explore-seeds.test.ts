import { describe, test } from 'vitest';
import { SUITE_TIMEOUT_MS } from '../support/check-cli.js';
import { CORRECT_STATEFUL, expectPassesSeeds } from '../support/explore-seeds.js';
import { soakRequested } from '../support/soak.js';

/**
 * The explorer's breadth (issue 37): each correct stateful plugin passes every explore check
 * for twenty seeds, two random sequences each, the systematic phase with the first. `npm test`
 * runs the first three (test/check-explore.test.ts); this, like the loopback soak, only when
 * asked (DHV_SOAK=1): `npm run test:soak`, which .ci/run calls before `npm test`.
 */
const SEEDS = 20;

describe.skipIf(!soakRequested)(`the correct stateful plugins pass the explorer with ${SEEDS} different seeds`, () => {
  for (const name of CORRECT_STATEFUL) {
    // A bound on a hang only: the seeds run a fixed number of sequences whatever they take.
    test.concurrent(
      `${name} passes every explore check for seeds 1..${SEEDS}`,
      () => expectPassesSeeds(name, SEEDS),
      2.5 * SUITE_TIMEOUT_MS,
    );
  }
});
