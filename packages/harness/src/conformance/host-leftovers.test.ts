import { randomUUID } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { teardownScope } from '@dhv/sdk/host';
import { LeftoverLooks, summariseLeftovers, type Leftover } from './host-leftovers.js';
import { removeTempDir, tempDir } from '../../../../test/support/kit.js';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => removeTempDir(dir)));
});

/** A sandbox with its volumes dir, and the looks of one check in it. */
async function sandbox() {
  const dir = await tempDir('host-leftovers');
  dirs.push(dir);
  const volumesDir = join(dir, 'volumes');
  await mkdir(volumesDir);
  const looks = new LeftoverLooks((await teardownScope(dir))!, []);
  return { volumesDir, looks };
}

/** A create that makes the volume's folder, then fails as a plugin's refusal does. */
function refusedAfterMkdir(volumesDir: string, volumeId: string) {
  return async () => {
    await mkdir(join(volumesDir, volumeId));
    throw new Error('refused');
  };
}

describe('the look after a failed create', () => {
  it('names the folder a first create of the volume left, and says the agent never deletes it', async () => {
    const { volumesDir, looks } = await sandbox();
    const volumeId = randomUUID();
    looks.started(volumeId);
    await expect(
      looks.around('create', { volumeId, volumesDir }, refusedAfterMkdir(volumesDir, volumeId), () => 'failed'),
    ).rejects.toThrow('refused');
    expect(looks.found).toEqual([
      expect.objectContaining({
        volumeId,
        kind: 'folder',
        after: 'failed create',
        what: join(volumesDir, volumeId),
        message: expect.stringContaining('the agent never calls delete after a failed create'),
      }),
    ]);
  });

  it('looks at nothing when another create of the volume was started (a refused repeat keeps the volume, rightly)', async () => {
    const { volumesDir, looks } = await sandbox();
    const volumeId = randomUUID();
    looks.started(volumeId);
    looks.started(volumeId);
    await expect(
      looks.around('create', { volumeId, volumesDir }, refusedAfterMkdir(volumesDir, volumeId), () => 'failed'),
    ).rejects.toThrow('refused');
    expect(looks.found).toEqual([]);
  });

  it('looks at nothing when the create was killed, not refused', async () => {
    const { volumesDir, looks } = await sandbox();
    const volumeId = randomUUID();
    looks.started(volumeId);
    await expect(
      looks.around('create', { volumeId, volumesDir }, refusedAfterMkdir(volumesDir, volumeId), () => 'not-judged'),
    ).rejects.toThrow('refused');
    expect(looks.found).toEqual([]);
  });
});

describe('the one line other checks get', () => {
  const leftover = (after: Leftover['after'], what: string): Leftover => ({
    volumeId: 'v',
    kind: after === 'run' ? 'process' : 'loop-device',
    after,
    what,
    message: `${what}: the long words`,
  });

  it('names at most three of each, points at the check that judges them, and says what dhv check did', () => {
    const line = summariseLeftovers([
      ...['/dev/loop1', '/dev/loop2', '/dev/loop3', '/dev/loop4'].map((d) => leftover('delete', d)),
      leftover('run', 'process 7 (/usr/bin/sleep)'),
    ]);
    expect(line).toBe(
      "the plugin's successful deletes left /dev/loop1, /dev/loop2, /dev/loop3 and 1 more (see delete.releases-host-resources); " +
        'dhv check released what it could at once, and removes the rest with its sandbox; ' +
        'the plugin exited leaving process 7 (/usr/bin/sleep) of its process group running (dhv check killed them; a real agent leaves them running)',
    );
    expect(summariseLeftovers([])).toBeUndefined();
  });
});
