/**
 * Whether the soak was asked for (DHV_SOAK=1: `npm run test:soak`, which .ci/run calls before
 * `npm test`). The soak's files skip their tests otherwise, and say so as skipped.
 */
export const soakRequested = process.env.DHV_SOAK === '1';
