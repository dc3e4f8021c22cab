import { finishOrphanedJournals } from '@dhv/sdk/host';

/**
 * Vitest global setup: before any test runs dhv, finishes the cleanup journals that killed
 * test processes of an earlier run left. Else the first dhv command of this run finishes
 * them and says so on stderr, and a test that reads that stderr exactly fails.
 */
export async function setup(): Promise<void> {
  for (const line of await finishOrphanedJournals()) console.log(`test setup: ${line}`);
}
