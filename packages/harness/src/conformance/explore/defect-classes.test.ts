import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { classify, DEFECT_CLASSES } from './defect-classes.js';
import { parseRecipe, type VolumeCall } from './recipe.js';
import type { ExploreCheckId } from './verdicts.js';

const README = new URL('../../../README.md', import.meta.url);

/** The class of a break of `check` at the last step of `recipe`, at the call `call` (none: no call broke). */
function classOf(check: ExploreCheckId, recipe: string, call?: string) {
  const steps = parseRecipe(recipe);
  const broke = call === undefined ? undefined : parseRecipe(call)[0];
  return classify(check, steps, { step: steps[steps.length - 1], call: broke as VolumeCall | undefined });
}

describe('the defect classes', () => {
  it("are the README's list, word for word", async () => {
    const readme = await readFile(README, 'utf8');
    const list = readme.slice(readme.indexOf('Every failure names its **defect class**')).split('\n\n')[1]!;
    const rows = [...list.matchAll(/^\| `([a-z-]+)` \| (.+) \|$/gm)];
    expect(Object.fromEntries(rows.map(([, id, words]) => [id, words]))).toEqual(DEFECT_CLASSES);
  });

  it('name a failed retry after a killed create, wherever the retry came', () => {
    expect(classOf('explore.calls-succeed', 'kill-create db', 'kill-create db')).toBe('killed-create-blocks');
    expect(classOf('explore.calls-succeed', 'kill-create db; create web; restore db', 'restore db')).toBe(
      'killed-create-blocks',
    );
  });

  it('name a failed create by what came before it', () => {
    expect(classOf('explore.calls-succeed', 'create db; delete db; create db', 'create db')).toBe('name-not-reusable');
    expect(classOf('explore.calls-succeed', 'create db-backup; create db', 'create db')).toBe('name-not-reusable');
    expect(classOf('explore.calls-succeed', 'fill 11', 'create long-11')).toBe('many-volumes');
    expect(classOf('explore.calls-succeed', 'fill 10; create db', 'create db')).toBe('many-volumes');
    expect(classOf('explore.calls-succeed', 'create web; create db', 'create db')).toBe('call-fails');
    expect(classOf('explore.calls-succeed', 'fill 14; restart', 'restore long-3')).toBe('restore-fails');
  });

  it('name lost data by the step that lost it', () => {
    expect(classOf('explore.volumes-survive', 'create db; create db-10; delete db')).toBe('delete-takes-others');
    expect(classOf('explore.volumes-survive', 'create db; cleanup-delete db; restart')).toBe('cleanup-delete-wipes');
    expect(classOf('explore.volumes-survive', 'create db; create web; cleanup-delete web')).toBe(
      'cleanup-delete-wipes',
    );
    expect(classOf('explore.volumes-survive', 'create db large; restore db', 'restore db')).toBe('restore-empties');
    expect(classOf('explore.volumes-survive', 'create db; create web; restart')).toBe('restore-empties');
    expect(classOf('explore.volumes-survive', 'create db; create web')).toBe('create-takes-others');
  });

  it('name the other checks by the check alone', () => {
    expect(classOf('explore.volumes-distinct', 'create a; create b')).toBe('shared-storage');
    expect(classOf('explore.fingerprint-fast', 'create a; fingerprint')).toBe('slow-fingerprint');
    expect(classOf('explore.releases-host-resources', 'create a; delete a', 'delete a')).toBe('host-resources-kept');
    expect(classOf('explore.nothing-left', 'create a; delete a', 'delete a')).toBe('leftovers');
  });
});
