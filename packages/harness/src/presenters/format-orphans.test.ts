import { describe, expect, it } from 'vitest';
import type { GcReport, Orphan } from '../agent/orphans.js';
import { gcText, orphanJson } from './format-orphans.js';

const AGAIN = 'dhv agent gc --remove';
const orphan = (id: string, fields: Partial<Orphan>): Orphan => ({
  id,
  name: undefined,
  kind: 'directory',
  paths: [`/v/${id}`],
  plugin: undefined,
  blocker: undefined,
  ...fields,
});
const report = (orphans: Orphan[]): GcReport => ({
  volumesDir: '/v',
  volumesDirTarget: undefined,
  freeLocks: [],
  orphans,
  removed: [],
  failed: [],
});
const A = 'aaaaaaaa-0000-4000-8000-000000000001';
const B = 'bbbbbbbb-0000-4000-8000-000000000002';

describe('agent gc, as a person reads it', () => {
  it("does not call a bare directory the built-in mkdir's: nothing on disk says which plugin made it", () => {
    const bare = orphan(A, { name: 'slow', plugin: 'mkdir' });
    const text = gcText(report([bare]), false, AGAIN);
    expect(text).toContain(
      'aaaaaaaa  directory, name "slow", plugin not recorded (gc removes it as the built-in mkdir does)',
    );
    expect(text).not.toContain('plugin mkdir');
    expect(orphanJson(bare, AGAIN)).toMatchObject({ PluginID: 'mkdir', MadeBy: '' });
    const loop = orphan(B, { kind: 'plugin files', plugin: 'dhv-loopback' });
    expect(gcText(report([loop]), false, AGAIN)).toContain('bbbbbbbb  plugin files, plugin dhv-loopback');
    expect(orphanJson(loop, AGAIN)).toMatchObject({ PluginID: 'dhv-loopback', MadeBy: 'dhv-loopback' });
  });

  it('offers --remove only for what gc can remove: a hint that exits 1 is not offered', () => {
    const blocked = orphan(A, { blocker: 'no create of this agent claimed volume ID' });
    const removable = orphan(B, { plugin: 'mkdir', name: 'cut' });
    const none = gcText(report([blocked]), false, AGAIN);
    expect(none).toContain('cannot be removed by gc: no create of this agent claimed');
    expect(none).not.toContain('Remove them all');
    expect(none).toMatch(/==> gc can remove none of them: each needs what its line above says/);
    const some = gcText(report([blocked, removable]), false, AGAIN);
    expect(some).toMatch(
      new RegExp(`==> Remove the 1 gc can remove \\(the other 1 need what their lines say\\): ${AGAIN} --id ${B}$`),
    );
    expect(gcText(report([removable]), false, AGAIN)).toMatch(/==> Remove them all: dhv agent gc --remove$/);
  });
});
