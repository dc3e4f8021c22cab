import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadNodeFacts, nodeFactsFile, saveNodeFacts, type NodeFacts } from './node-facts.js';
import { removeTempDir, tempDir } from '../../../../../test/support/kit.js';

const ID = '6f1c3c5e-5d5b-4a0e-9c43-1f1d8c1b2a10';

function facts(): NodeFacts {
  return {
    fingerprint: { plugins: [], skipped: [], attributes: { 'plugins.host_volume.mkdir.version': '0.0.1' } },
    fingerprintedAt: '2026-12-02T18:00:00.000Z',
    restoredAt: '2026-12-02T18:00:00.000Z',
    restoreWarnings: ['a warning'],
    hostVolumes: new Map([
      ['web', { Name: 'web', Path: `/srv/vols/${ID}`, ReadOnly: false, ID }],
      ['cloud-img', { Name: 'cloud-img', Path: '/opt/cloud-img', ReadOnly: true, ID: '' }],
      ['odd', { Name: 'not-its-key', Path: '/x', ReadOnly: false, ID: 'b' }],
    ]),
    volumeStates: new Map([
      [ID, 'ready'],
      ['b', 'unavailable'],
      ['c', 'pending'],
    ]),
  };
}

let dir: string;
beforeEach(async () => {
  dir = await tempDir('node-facts');
  await mkdir(dirname(nodeFactsFile(dir)), { recursive: true });
});
afterEach(async () => {
  await removeTempDir(dir);
});

describe("the node's facts in client/node.json", () => {
  it('read back as they were written, names, paths, read-only flags, IDs and states alike', async () => {
    await saveNodeFacts(dir, facts());
    expect(await loadNodeFacts(dir)).toEqual(facts());
  });

  it('are written as lists, not as objects keyed by each volume', async () => {
    await saveNodeFacts(dir, facts());
    const file = JSON.parse(await readFile(nodeFactsFile(dir), 'utf8'));
    expect(file.format).toBe(2);
    expect(file.hostVolumes).toContainEqual(['web', `/srv/vols/${ID}`, false, ID]);
    expect(file.hostVolumes).toContainEqual(['odd', '/x', false, 'b', 'not-its-key']);
    expect(file.volumeStates).toEqual({ ready: [ID], unavailable: ['b'], pending: ['c'] });
  });

  it('are read from the file an earlier dhv wrote, with both maps as objects', async () => {
    const { hostVolumes, volumeStates, ...rest } = facts();
    await writeFile(
      nodeFactsFile(dir),
      JSON.stringify({
        ...rest,
        hostVolumes: Object.fromEntries(hostVolumes),
        volumeStates: Object.fromEntries(volumeStates),
      }),
    );
    expect(await loadNodeFacts(dir)).toEqual(facts());
  });

  it('are no facts at all when the file is missing or does not hold them', async () => {
    expect(await loadNodeFacts(dir)).toBeUndefined();
    await writeFile(nodeFactsFile(dir), JSON.stringify({ ...facts(), format: 2, hostVolumes: 'not a list' }));
    expect(await loadNodeFacts(dir)).toBeUndefined();
    await writeFile(nodeFactsFile(dir), '{"fingerprint":');
    expect(await loadNodeFacts(dir)).toBeUndefined();
  });
});
