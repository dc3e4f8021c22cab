import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { mount, unmount } from '@dhv/sdk/host';
import { watchFor, type EventWatch } from './kill-events.js';

const asRoot = process.getuid?.() === 0;
/** Long enough for a watch's event on a busy host; a test waits this long only for what must not come. */
const SETTLE_MS = 300;

describe("a killed create's kill points at the plugin's own steps", () => {
  let dir = '';
  const watches: EventWatch[] = [];
  const mounted: string[] = [];
  afterEach(async () => {
    for (const watch of watches.splice(0)) watch.stop();
    for (const point of mounted.splice(0)) await unmount(point, { lazy: true });
    await rm(dir, { recursive: true, force: true });
  });
  const watch = async (event: 'write' | 'rename' | 'mount') => {
    dir = await mkdtemp(join(tmpdir(), 'dhv-kill-events-'));
    const made = await watchFor(event, dir);
    watches.push(made);
    return made;
  };
  const seenWithin = async (w: EventWatch, ms: number) => {
    for (let waited = 0; waited < ms && !w.seen.aborted; waited += 10) await delay(10);
    return w.seen.aborted;
  };

  it('sees the first write: a new entry in the volumes dir', async () => {
    const w = await watch('write');
    expect(await seenWithin(w, SETTLE_MS)).toBe(false);
    await writeFile(join(dir, '.record'), '');
    expect(await seenWithin(w, 10 * SETTLE_MS)).toBe(true);
  });

  it('sees the first rename, in the volumes dir or a folder of it, and not a new entry', async () => {
    const w = await watch('rename');
    await mkdir(join(dir, '.staging'));
    await writeFile(join(dir, '.staging', 'volume.tmp'), 'x');
    expect(await seenWithin(w, SETTLE_MS)).toBe(false);
    await rename(join(dir, '.staging', 'volume.tmp'), join(dir, 'volume'));
    expect(await seenWithin(w, 10 * SETTLE_MS)).toBe(true);
  });

  it.skipIf(!asRoot)('sees the first mount below the volumes dir, not one there before', async () => {
    const w = await watch('mount');
    await mkdir(join(dir, 'volume'));
    expect(await seenWithin(w, SETTLE_MS)).toBe(false);
    await mount('dhv-kill-events', join(dir, 'volume'), 'tmpfs', ['size=1m']);
    mounted.push(join(dir, 'volume'));
    expect(await seenWithin(w, 10 * SETTLE_MS)).toBe(true);
  });
});
