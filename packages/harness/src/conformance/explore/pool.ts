import type { VolumeKey } from './recipe.js';

/** Longer than the 64 characters some plugins cut names to; the two differ only at the end. */
export const LONG_STEM = 'nightly-reporting-replica-of-the-primary-orders-database-for-analytics-';

/**
 * The volumes a sequence works on: names that share prefixes (db, db-1, db-10, db-backup),
 * two long names sharing a stem, and the same name in several namespaces.
 */
export const VOLUME_POOL: readonly VolumeKey[] = [
  ...['db', 'db-backup', 'db-1', 'db-10', 'web', `${LONG_STEM}a`, `${LONG_STEM}b`].map((name) => ({
    namespace: 'default',
    name,
  })),
  { namespace: 'prod', name: 'db' },
  { namespace: 'prod', name: 'web' },
  { namespace: 'dev', name: 'db' },
];

/** The most volumes one `fill` step makes: past ten, where string order and scans break. */
export const MAX_FILL = 12;
