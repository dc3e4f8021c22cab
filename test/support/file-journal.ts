import { afterAll } from 'vitest';
import { CleanupJournal } from '@dhv/sdk/host';

/**
 * At the end of each test file (each runs in a process of its own), releases whatever its
 * tests made through the cleanup journal and did not remove, so nothing outlives the file
 * and no later dhv command finds this process's journal to finish.
 */
afterAll(async () => {
  const problems = (await CleanupJournal.ofThisProcess()?.releaseAll()) ?? [];
  if (problems.length > 0) throw new Error(`the test file left what could not be released:\n${problems.join('\n')}`);
});
