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
    const list = readme
      .slice(readme.indexOf('The defect classes, each driven by the systematic phase'))
      .split('\n\n')[1]!;
    const rows = [...list.matchAll(/^\| `([a-z-]+)` \| (.+) \|$/gm)];
    expect(Object.fromEntries(rows.map(([, id, words]) => [id, words]))).toEqual(DEFECT_CLASSES);
  });

  it('name a failed retry after a killed create, wherever the retry came, by where the kill came', () => {
    expect(classOf('explore.calls-succeed', 'kill-create db', 'kill-create db')).toBe('killed-create-lock');
    expect(classOf('explore.calls-succeed', 'kill-create db; create web; restore db', 'restore db')).toBe(
      'killed-create-lock',
    );
    expect(classOf('explore.calls-succeed', 'kill-create db at 40ms; create db', 'create db')).toBe(
      'killed-create-part-way',
    );
  });

  it('name a break whose recipe keeps a host condition by that condition, and a kill at an event as part way', () => {
    expect(classOf('explore.calls-succeed', 'volumes-dir long; create db; create web', 'create web')).toBe(
      'long-volumes-dir',
    );
    expect(classOf('explore.volumes-survive', 'volumes-dir other-fs; create db; restore db', 'restore db')).toBe(
      'volumes-dir-other-fs',
    );
    expect(classOf('explore.calls-succeed', 'kill-create db at write', 'kill-create db at write')).toBe(
      'killed-create-part-way',
    );
  });

  it('name a failed create by what came before it', () => {
    expect(classOf('explore.calls-succeed', 'create db; delete db; create db', 'create db')).toBe('guard-leak');
    expect(classOf('explore.calls-succeed', 'create db-backup; create db', 'create db')).toBe('guard-prefix');
    expect(classOf('explore.calls-succeed', 'fill 11', 'create long-11')).toBe('string-order');
    expect(classOf('explore.calls-succeed', 'fill 10; create db', 'create db')).toBe('string-order');
    expect(classOf('explore.calls-succeed', 'create web; create db', 'create db')).toBe('call-fails');
    expect(classOf('explore.calls-succeed', 'fill 14; restart', 'restore long-3')).toBe('restore-fails');
  });

  it('name lost data by the step that lost it', () => {
    expect(classOf('explore.volumes-survive', 'create db; create db-10; delete db')).toBe('delete-prefix-sweep');
    expect(classOf('explore.volumes-survive', 'create prod/db; delete prod/db + create prod/web after 40ms')).toBe(
      'delete-overlaps-create',
    );
    expect(classOf('explore.volumes-survive', 'create db; cleanup-delete db; restart')).toBe('cleanup-wipes-records');
    expect(classOf('explore.volumes-survive', 'create db; create web; cleanup-delete web')).toBe(
      'cleanup-wipes-records',
    );
    expect(classOf('explore.volumes-survive', 'create db large; restore db', 'restore db')).toBe('restore-rebuilds');
    expect(classOf('explore.volumes-survive', 'create db mode=0700; write db; restore db', 'restore db')).toBe(
      'restore-with-parameters',
    );
    expect(classOf('explore.volumes-survive', 'create db; create web; restart')).toBe('restart-lost-update');
    expect(classOf('explore.volumes-survive', 'create db; create web')).toBe('slot-reuse');
  });

  it('name the other checks by the check alone', () => {
    expect(classOf('explore.volumes-distinct', 'create a; create b')).toBe('slot-reuse');
    expect(classOf('explore.volumes-distinct', `create ${'n'.repeat(70)}a; create ${'n'.repeat(70)}b`)).toBe(
      'name-truncation',
    );
    expect(classOf('explore.fingerprint-fast', 'create a; fingerprint')).toBe('fingerprint-scan');
    expect(classOf('explore.releases-host-resources', 'create a; delete a', 'delete a')).toBe('host-resources-kept');
    expect(classOf('explore.nothing-left', 'create a; delete a', 'delete a')).toBe('leftovers');
  });
});
