import { describe, it } from 'vitest';
import { soakRequested } from '../support/soak.js';

/**
 * The malformed-request corpus of test/reliability-bad-input.test.ts at soak size: npm test
 * runs each kind of fault once for each reference plugin; here 200 cases each, seeded random
 * ones added (DHV_CORPUS_CASES). It runs only when asked (DHV_SOAK=1, `npm run test:soak`).
 */
if (soakRequested) {
  process.env.DHV_CORPUS_CASES ??= '200';
  await import('../reliability-bad-input.test.js');
} else {
  describe.skip('the malformed-request corpus at soak size (DHV_SOAK=1)', () => {
    it('runs in the soak only', () => {});
  });
}
