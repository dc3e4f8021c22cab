import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { CleanupJournal, releaseEverythingBelow } from '@dhv/sdk/host';

/**
 * The suite's scratch space: one temporary root per run, a directory per check under
 * it, and a forced removal that also undoes what a loopback plugin leaves behind
 * (mounts and loop devices) when its own delete did not. Unlike the agent's reboot,
 * which stops at the first failure, this carries on and reports every problem: it is
 * the last chance to leave the host clean.
 */
export function makeRunRoot(parent?: string): Promise<{ path: string; canonical: string }> {
  // Recorded in the cleanup journal before it is made, and resolved before any plugin runs
  // (the plugin runs as root and may plant links later).
  return CleanupJournal.forThisProcess().makeFolder(parent ?? tmpdir(), 'dhv-check-');
}

/** Removes the run root (forceRemove, and the plugins' records of volumes dirs in it) and strikes it from the journal. */
export function removeRunRoot(path: string): Promise<string[]> {
  return CleanupJournal.forThisProcess().removeFolder(path);
}

/**
 * Unmounts everything mounted at or below `dir` (deepest first), detaches loop devices
 * backed by files under it, then removes it. Returns what could not be undone.
 * `canonical` is `dir` as the kernel names it, taken when it was made: the teardown
 * acts there only, so a plugin that swapped `dir` or its parent for a link to somewhere
 * else never has that place unmounted (rm then removes the link, never its target).
 */
export async function forceRemove(dir: string, canonical?: string): Promise<string[]> {
  const problems = await releaseEverythingBelow(dir, canonical);
  try {
    await rm(dir, { recursive: true, force: true, maxRetries: 3 });
  } catch (err) {
    problems.push(`could not remove ${dir}: ${err instanceof Error ? err.message : String(err)}`);
  }
  return problems;
}
