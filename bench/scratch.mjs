// The folders benchmarks make volumes in, made through this process's cleanup journal
// (@dhv/sdk/host, the one dhv check, dhv demo and the test kit use): each is recorded
// before it exists and removed whatever happens: at the end of a benchmark, when the run is
// interrupted (SIGINT, SIGTERM, SIGHUP), and, for a run killed outright, at the start of
// the next run (or by any dhv command). Removing one first unmounts what is mounted below
// it and detaches the loop devices backed by files below it.
import { tmpdir } from 'node:os';
import { CleanupJournal, finishOrphanedJournals } from '@dhv/sdk/host';

/** Each folder handed out (its canonical path) and the path the journal records it by. */
const made = new Map();

/**
 * A new folder `<base>/dhv-bench-<name>-XXXXXXXX`, as its canonical path, removed by
 * `removeScratch` or, if the run ends another way, by `removeAllScratch` or the next run's
 * `sweepDeadScratch`. `base` defaults to the temp folder; dhv-loopback images need a real
 * filesystem (`/var/tmp`), since the temp folder may be a tmpfs.
 */
export async function makeScratch(name, base = tmpdir()) {
  const { path, canonical } = await CleanupJournal.forThisProcess().makeFolder(base, `dhv-bench-${name}-`);
  made.set(canonical, path);
  return canonical;
}

export async function removeScratch(dir) {
  const problems = await CleanupJournal.forThisProcess().removeFolder(made.get(dir) ?? dir);
  made.delete(dir);
  for (const problem of problems) process.stderr.write(`could not remove ${dir}: ${problem}\n`);
}

/** Removes every folder this run made that is still there (the interrupt handler's job). */
export async function removeAllScratch() {
  for (const problem of await CleanupJournal.forThisProcess().releaseAll()) process.stderr.write(`${problem}\n`);
  made.clear();
}

/** Finishes the journals of runs (of any dhv process) killed outright; returns one line for each. */
export function sweepDeadScratch() {
  return finishOrphanedJournals();
}
