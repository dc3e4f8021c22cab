import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EVERY_NAME_LOCK, NameClaims } from './name-claims.js';
import { dataDirLayout } from '../config/data-dir.js';

describe('NameClaims locks', () => {
  let dataDir: string;
  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'dhv-name-claims-'));
  });
  afterEach(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  /** Runs `holder`, starts `waiter` while it holds its lock, and returns the order things happened in. */
  async function order(
    holder: (fn: () => Promise<void>) => Promise<void>,
    waiter: (fn: () => Promise<void>) => Promise<void>,
  ): Promise<string[]> {
    const events: string[] = [];
    let waiting: Promise<void> | undefined;
    await holder(async () => {
      events.push('holder in');
      waiting = waiter(async () => {
        events.push('waiter in');
      });
      await new Promise((r) => setTimeout(r, 300));
      events.push('holder out');
    });
    await waiting;
    return events;
  }

  // Two NameClaims stand for two dhv processes: flock(2) locks belong to open files, not processes.
  const one = () => new NameClaims(dataDir);

  it("keeps a restore's lock of every name out while a name's lock is held, and the other way round", async () => {
    expect(
      await order(
        (fn) => one().withLock('a', fn),
        (fn) => one().withEveryName(fn),
      ),
    ).toEqual(['holder in', 'holder out', 'waiter in']);
    expect(
      await order(
        (fn) => one().withEveryName(fn),
        (fn) => one().withLock('b', fn),
      ),
    ).toEqual(['holder in', 'holder out', 'waiter in']);
  });

  it("lets the locks of two names be held at once, and leaves only the lock of every name's file", async () => {
    expect(
      await order(
        (fn) => one().withLock('a', fn),
        (fn) => one().withLock('b', fn),
      ),
    ).toEqual(['holder in', 'waiter in', 'holder out']);
    expect(await readdir(dataDirLayout(dataDir).locks)).toEqual([EVERY_NAME_LOCK]);
  });
});
