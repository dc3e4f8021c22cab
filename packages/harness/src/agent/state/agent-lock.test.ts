import { readdir } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AgentLock, EVERY_NAME_LOCK } from './agent-lock.js';
import { stateLayout } from './layout.js';
import { removeTempDir, tempDir } from '../../../../../test/support/kit.js';

describe('the agent lock', () => {
  let dataDir: string;
  beforeEach(async () => {
    dataDir = await tempDir('agent-lock');
  });
  afterEach(async () => {
    await removeTempDir(dataDir);
  });

  /**
   * Runs `holder`, starts `waiter` while it holds its lock, and returns the order things
   * happened in. The holder lets go after 300 ms; with `untilWaiterIn`, as soon as the waiter
   * is in (or after 15 s), so a waiter that needs no wait is seen getting in however loaded
   * the machine is.
   */
  async function order(
    holder: (fn: () => Promise<void>) => Promise<void>,
    waiter: (fn: () => Promise<void>) => Promise<void>,
    untilWaiterIn = false,
  ): Promise<string[]> {
    const events: string[] = [];
    let waiting: Promise<void> | undefined;
    await holder(async () => {
      events.push('holder in');
      let waiterIn = () => {};
      const entered = new Promise<void>((r) => (waiterIn = r));
      waiting = waiter(async () => {
        events.push('waiter in');
        waiterIn();
      });
      const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
      await (untilWaiterIn ? Promise.race([entered, sleep(15_000)]) : sleep(300));
      events.push('holder out');
    });
    await waiting;
    return events;
  }

  // Two AgentLocks stand for two dhv processes: flock(2) locks belong to open files, not processes.
  const one = (waitMs = 20_000) => new AgentLock(stateLayout(dataDir), waitMs);
  const work = { doing: 'testing' };

  it("keeps a restart's hold of the whole agent out while a name's lock is held, and the other way round", async () => {
    expect(
      await order(
        (fn) => one().name('a', work, fn),
        (fn) => one().exclusive(work, fn),
      ),
    ).toEqual(['holder in', 'holder out', 'waiter in']);
    expect(
      await order(
        (fn) => one().exclusive(work, fn),
        (fn) => one().name('b', work, fn),
      ),
    ).toEqual(['holder in', 'holder out', 'waiter in']);
  });

  it('lets the locks of two names be held at once, and leaves no lock file but the lock of every name', async () => {
    expect(
      await order(
        (fn) => one().name('a', work, fn),
        (fn) => one().name('b', work, fn),
        true,
      ),
    ).toEqual(['holder in', 'waiter in', 'holder out']);
    expect((await readdir(stateLayout(dataDir).locks)).filter((n) => n !== EVERY_NAME_LOCK)).toEqual([]);
  });

  it('lets no new create overtake a restart that waits (no starvation by a stream of creates)', async () => {
    const events: string[] = [];
    let releaseFirst!: () => void;
    const firstHolds = new Promise<void>((r) => (releaseFirst = r));
    let firstIn!: () => void;
    const firstEntered = new Promise<void>((r) => (firstIn = r));
    const first = one().name('a', work, async () => {
      events.push('create a in');
      firstIn();
      await firstHolds;
      events.push('create a out');
    });
    await firstEntered;
    const restart = one().exclusive(work, async () => {
      events.push('restart in');
    });
    await new Promise((r) => setTimeout(r, 300));
    const second = one().name('b', work, async () => {
      events.push('create b in');
    });
    await new Promise((r) => setTimeout(r, 300));
    releaseFirst();
    await Promise.all([first, restart, second]);
    expect(events).toEqual(['create a in', 'create a out', 'restart in', 'create b in']);
  });

  it('gives up after its bounded wait naming the process that holds the agent and what it does', async () => {
    let release!: () => void;
    const holds = new Promise<void>((r) => (release = r));
    let entered!: () => void;
    const inside = new Promise<void>((r) => (entered = r));
    const holder = one().exclusive({ doing: 'restarting the agent' }, async () => {
      entered();
      await holds;
    });
    await inside;
    const waiter = one(500);
    const error = await waiter.name('a', { doing: 'creating volume "a"' }, async () => {}).catch((e: unknown) => e);
    release();
    await holder;
    expect(error).toMatchObject({ code: 'AGENT_BUSY' });
    expect((error as Error).message).toMatch(
      /^gave up creating volume "a" after 0\.5 s of waiting: the agent is busy: /,
    );
    expect((error as Error).message).toContain(`process ${process.pid} (\`dhv`);
    expect((error as Error).message).toContain('holds it, restarting the agent, since ');
  });

  it('stops waiting at once when its signal aborts (Ctrl-C)', async () => {
    let release!: () => void;
    const holds = new Promise<void>((r) => (release = r));
    let entered!: () => void;
    const inside = new Promise<void>((r) => (entered = r));
    const holder = one().exclusive(work, async () => {
      entered();
      await holds;
    });
    await inside;
    const controller = new AbortController();
    const started = Date.now();
    const waiting = one()
      .shared(work, async () => {}, controller.signal)
      .catch((e: unknown) => e);
    setTimeout(() => controller.abort(), 200);
    const error = await waiting;
    release();
    await holder;
    expect(error).toMatchObject({ code: 'AGENT_SHUT_DOWN' });
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('runs work nested in its own exclusive hold without waiting on itself', async () => {
    const lock = one(2_000);
    const events: string[] = [];
    await lock.exclusive(work, async () => {
      await lock.name('a', work, async () => {
        events.push('name inside');
      });
      await lock.exclusive(work, async () => {
        events.push('exclusive inside');
      });
    });
    expect(events).toEqual(['name inside', 'exclusive inside']);
  });

  it('refuses at once, as the bug it is, work held shared that asks for the agent exclusive (it would wait on itself)', async () => {
    const lock = one(60_000);
    const error = await lock
      .name('a', work, () => lock.exclusive({ doing: 'starting the agent' }, async () => {}))
      .catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/^dhv bug: starting the agent needs the agent exclusive inside work/);
  });
});
