import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { releaseEverythingBelow } from '@dhv/sdk/host';

/**
 * The suite's scratch space: one temporary root per run, a directory per check under
 * it, and a forced removal that also undoes what a loopback plugin leaves behind
 * (mounts and loop devices) when its own delete did not. Unlike the agent's reboot,
 * which stops at the first failure, this carries on and reports every problem: it is
 * the last chance to leave the host clean.
 */
export async function makeRunRoot(parent?: string): Promise<string> {
  return mkdtemp(join(parent ?? tmpdir(), 'dhv-check-'));
}

/**
 * Unmounts everything mounted at or below `dir` (deepest first), detaches loop devices
 * backed by files under it, then removes it. Returns what could not be undone.
 */
export async function forceRemove(dir: string): Promise<string[]> {
  const problems = await releaseEverythingBelow(dir);
  try {
    await rm(dir, { recursive: true, force: true, maxRetries: 3 });
  } catch (err) {
    problems.push(`could not remove ${dir}: ${err instanceof Error ? err.message : String(err)}`);
  }
  return problems;
}
