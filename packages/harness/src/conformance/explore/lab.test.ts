import { mkdir, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { CheckContext, CreateInput, DeleteInput } from '../types.js';
import { VolumeLab } from './lab.js';
import { parseRecipe } from './recipe.js';
import { Violation } from './violation.js';
import { removeTempDir, tempDir } from '../../../../../test/support/kit.js';

/**
 * The lab's verdicts on calls made at once, with a plugin stand-in whose answers come in an
 * order the test sets: two plugin processes racing for a lock finish in either order, and a
 * busy machine picks one. Both orders are run here, so neither depends on the machine.
 */

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => removeTempDir(dir)));
});

type Order = 'delete answered first' | 'create answered first';

/**
 * A plugin with numbered slots, as the slots-ok fixture: a create takes one more than the
 * highest slot held. In `delete db + create dev/db`, the create waits for the delete (as it
 * waits for the fixture's flock), so it is given the slot the delete freed; `order` says
 * which of the two answers reaches the lab first. `removes`: whether the delete removes the
 * folder (false: it leaves it, with the volume's data, and the create is given it anyway).
 */
function slotsPlugin(volumesDir: string, order: Order, removes: boolean): CheckContext {
  const slots = new Map<string, number>();
  /** Set by the delete: resolved when it has removed the folder, and when the create beside it has made its own. */
  let race: { removed: Promise<void>; created: () => void } | undefined;
  const answer = () => new Promise((resolve) => setTimeout(resolve, 20));
  const ctx = {
    settings: { capacityMin: 0n, capacityMax: 0n },
    // The volumes dir stands in for the sandbox: the lab writes its markers only inside it.
    sandboxScope: { dir: dirname(volumesDir), canonical: dirname(volumesDir) },
    leftovers: [],
    newVolume: (overrides: Partial<CreateInput>) => ({ nodeId: 'node', nodePool: 'default', ...overrides }),
    deleteRequest: (request: CreateInput, createdPath: string) => ({ ...request, createdPath }),
    async create(request: CreateInput) {
      await race?.removed;
      const slot = slots.get(request.volumeId) ?? Math.max(0, ...slots.values()) + 1;
      slots.set(request.volumeId, slot);
      const path = join(volumesDir, `slot-${slot}`);
      await mkdir(path, { recursive: true });
      race?.created();
      if (race !== undefined && order === 'delete answered first') await answer();
      return { path, bytes: 0n, stderr: '', durationMs: 20 };
    },
    async delete(request: DeleteInput) {
      let removed!: () => void;
      const made: { removed: Promise<void>; created: () => void } = {
        removed: new Promise<void>((resolve) => (removed = resolve)),
        created: () => undefined,
      };
      const created = new Promise<void>((resolve) => (made.created = resolve));
      race = made;
      const slot = slots.get(request.volumeId);
      if (removes && slot !== undefined) await rm(join(volumesDir, `slot-${slot}`), { recursive: true });
      slots.delete(request.volumeId);
      removed();
      // Both folders are as the plugins left them before either answer reaches the lab.
      await created;
      if (order === 'create answered first') await answer();
      return { stderr: '' };
    },
  };
  return ctx as unknown as CheckContext;
}

async function labFor(order: Order, removes: boolean): Promise<VolumeLab> {
  const dir = await tempDir('lab-test');
  dirs.push(dir);
  const volumesDir = join(dir, 'volumes');
  return new VolumeLab(slotsPlugin(volumesDir, order, removes), volumesDir, 1);
}

const RECIPE = parseRecipe('create db; delete db + create dev/db');

describe('a delete beside a create (calls made at once)', () => {
  for (const order of ['delete answered first', 'create answered first'] as const) {
    it(`is no leftover when the create is given the folder the delete freed (${order})`, async () => {
      const lab = await labFor(order, true);
      for (const step of RECIPE) await lab.run(step);
      expect(lab.cosmetic?.violation.message).toBeUndefined();
    });

    it(`is a leftover when the delete left the volume's data and the create was given its folder (${order})`, async () => {
      const lab = await labFor(order, false);
      for (const step of RECIPE) await lab.run(step);
      expect(lab.cosmetic?.violation.checkId).toBe('explore.nothing-left');
      expect(lab.cosmetic?.violation.message).toMatch(/^the delete of db succeeded but left \S+\/slot-1 in place/);
    });
  }
});

/** A plugin that rebuilds a volume on every create, emptying it, and says so on stderr. */
function rebuildingPlugin(volumesDir: string): CheckContext {
  const ctx = {
    settings: { capacityMin: 0n, capacityMax: 0n },
    sandboxScope: { dir: dirname(volumesDir), canonical: dirname(volumesDir) },
    leftovers: [],
    newVolume: (overrides: Partial<CreateInput>) => ({ nodeId: 'node', nodePool: 'default', ...overrides }),
    async create(request: CreateInput) {
      const path = join(volumesDir, request.volumeId);
      await rm(path, { recursive: true, force: true });
      await mkdir(path, { recursive: true });
      return { path, bytes: 0n, stderr: `rebuilt ${path}\n`, durationMs: 7 };
    },
  };
  return ctx as unknown as CheckContext;
}

describe('a break found after calls that succeeded', () => {
  it("carries what the step's calls said on stderr, and the lab times each new volume's create", async () => {
    const dir = await tempDir('lab-test');
    dirs.push(dir);
    const volumesDir = join(dir, 'volumes');
    const lab = new VolumeLab(rebuildingPlugin(volumesDir), volumesDir, 1);
    const [create, restore] = parseRecipe('create db; restore db');
    await lab.run(create!);
    const broke = await lab.run(restore!).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(broke).toBeInstanceOf(Violation);
    const violation = broke as Violation;
    expect(violation.checkId).toBe('explore.volumes-survive');
    expect(violation.step).toEqual(restore);
    expect(violation.stderr).toMatch(/^the restore of db \(its saved create request again\): rebuilt \S+$/);
    expect(lab.createTimes).toEqual([{ capacityBytes: 0n, durationMs: 7 }]);
  });
});
