import { mkdir, readdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { CheckContext, CreateInput } from '../types.js';
import { VolumeLab } from './lab.js';
import { parseRecipe } from './recipe.js';
import { VOLUME_DATA } from './volume-disk.js';
import { removeTempDir, tempDir } from '../../../../../test/support/kit.js';

/** The systematic phase's words in the lab: data written, parameters given, a call started later. */

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => removeTempDir(dir)));
});

interface Seen {
  op: 'create' | 'delete';
  name: string;
  at: number;
  parameters?: Record<string, string> | null;
}

/** A plugin stand-in: a folder per volume ID, every call recorded with when it started. */
async function recordingLab(): Promise<{ lab: VolumeLab; seen: Seen[]; volumesDir: string }> {
  const dir = await tempDir('lab-steps');
  dirs.push(dir);
  const volumesDir = join(dir, 'volumes');
  const seen: Seen[] = [];
  const started = performance.now();
  const ctx = {
    settings: { capacityMin: 0n, capacityMax: 0n, parameters: { pool: 'fast' } },
    sandboxScope: { dir: dirname(volumesDir), canonical: dirname(volumesDir) },
    leftovers: [],
    newVolume: (overrides: Partial<CreateInput>) => ({ nodeId: 'node', nodePool: 'default', ...overrides }),
    async create(request: CreateInput) {
      seen.push({
        op: 'create',
        name: request.volumeName,
        at: performance.now() - started,
        parameters: request.parameters,
      });
      const path = join(volumesDir, request.volumeId);
      await mkdir(path, { recursive: true });
      return { path, bytes: 0n, stderr: '', durationMs: 1 };
    },
    async delete(request: CreateInput) {
      seen.push({ op: 'delete', name: request.volumeName, at: performance.now() - started });
      return { stderr: '' };
    },
  };
  return { lab: new VolumeLab(ctx as unknown as CheckContext, volumesDir, 1), seen, volumesDir };
}

describe('the lab runs the systematic phase steps', () => {
  it('writes data into a live volume, beside its marker', async () => {
    const { lab, volumesDir } = await recordingLab();
    for (const step of parseRecipe('create db; write db')) await lab.run(step);
    const [volume] = await readdir(volumesDir);
    const files = await readdir(join(volumesDir, volume!));
    expect(files.filter((f) => f.startsWith('data-'))).toHaveLength(VOLUME_DATA.files);
    expect(files).toContain('.dhv-explore-marker');
  });

  it("gives a create's parameters beside the user's own", async () => {
    const { lab, seen } = await recordingLab();
    for (const step of parseRecipe('create db mode=0700; create web')) await lab.run(step);
    expect(seen.map((s) => s.parameters)).toEqual([{ pool: 'fast', mode: '0700' }, undefined]);
  });

  it('starts a call of a step that runs several at once when its "after" says', async () => {
    const { lab, seen } = await recordingLab();
    for (const step of parseRecipe('create db; delete db + create web after 150ms')) await lab.run(step);
    const del = seen.find((s) => s.op === 'delete')!;
    const web = seen.find((s) => s.name === 'web')!;
    expect(web.at - del.at).toBeGreaterThanOrEqual(140);
  });
});
