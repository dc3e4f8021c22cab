import { describe, expect, it } from 'vitest';
import { DEFECT_CLASSES, JUDGED_BY_EVERY_SCENARIO } from './defect-classes.js';
import { CROWDED_RESTORES, KILL_POINTS, mkdirParameterSets, scenarios } from './scenarios.js';
import { formatRecipe, parseRecipe } from './recipe.js';

const PACE = { createMs: 200, deleteWithDataMs: 90 };

describe('the systematic phase', () => {
  // The README's list is DEFECT_CLASSES word for word (defect-classes.test.ts).
  it('has a scenario of its own for each defect class but those every scenario judges, and none for a class not listed', () => {
    const all = scenarios(PACE, mkdirParameterSets(0, 0));
    const covered = new Set(all.flatMap((s) => s.classes));
    expect(JUDGED_BY_EVERY_SCENARIO.filter((c) => covered.has(c))).toEqual([]);
    expect([...covered, ...JUDGED_BY_EVERY_SCENARIO].sort()).toEqual(Object.keys(DEFECT_CLASSES).sort());
  });

  it('restores a volume holding data under a crowded mount table, or leaves restore-fails to the restarts where it cannot', () => {
    const crowded = scenarios(PACE, []).filter((s) => s.classes.includes('restore-fails'));
    expect(crowded.map((s) => formatRecipe(s.steps))).toEqual([
      'create db; create web; create prod/db; create dev/db; restart; restart',
      `create db; ${Array(CROWDED_RESTORES).fill('restore db crowded').join('; ')}`,
    ]);
    const plain = scenarios(PACE, [], { crowded: false, volumesDirs: [] });
    expect(plain.filter((s) => s.classes.includes('restore-fails')).map((s) => s.classes)).toEqual([
      ['restart-lost-update', 'restore-fails'],
    ]);
    expect(plain.some((s) => s.steps.some((step) => step.kind === 'restore' && step.crowded))).toBe(false);
  });

  it('kills creates at points of the plugin own create time, each followed by a retry, a delete and a create', () => {
    const killed = scenarios(PACE, []).filter((s) => s.classes.includes('killed-create-part-way'))[3]!;
    expect(formatRecipe(killed.steps)).toBe(
      KILL_POINTS.map((p, i) => {
        const name = ['db', 'web', 'db-1'][i];
        return `kill-create ${name} at ${PACE.createMs * p}ms; delete ${name}; create ${name}`;
      }).join('; '),
    );
  });

  it("kills creates at the plugin's own first write, rename and mount, each followed by a delete and a create, before the kills by time", () => {
    const killed = scenarios(PACE, []).filter((s) => s.classes.includes('killed-create-part-way'));
    expect(killed.map((s) => formatRecipe(s.steps)).slice(0, 3)).toEqual(
      ['write', 'rename', 'mount'].map((event) => `kill-create db at ${event}; delete db; create db`),
    );
    expect(killed.slice(0, 3).every((s) => !s.alone)).toBe(true);
    const all = scenarios(PACE, []);
    const lock = all.findIndex((s) => s.classes.includes('killed-create-lock'));
    expect(formatRecipe(all[lock + 1]!.steps)).toBe('kill-create db at write; delete db; create db');
  });

  it('puts a volumes dir made under each host condition this host can make through a volume life', () => {
    const underConditions = (volumesDirs: ('long' | 'other-fs')[]) =>
      scenarios(PACE, [], { crowded: true, volumesDirs })
        .filter((s) => s.steps[0]?.kind === 'volumes-dir')
        .map((s) => [s.classes, formatRecipe(s.steps)]);
    const calls = 'create db; create web; write db; restore db; delete web';
    expect(underConditions(['long', 'other-fs'])).toEqual([
      [['long-volumes-dir'], `volumes-dir long; ${calls}`],
      [['volumes-dir-other-fs'], `volumes-dir other-fs; ${calls}`],
    ]);
    expect(underConditions(['long'])).toEqual([[['long-volumes-dir'], `volumes-dir long; ${calls}`]]);
  });

  it('overlaps a delete holding data with a create in its namespace, both ways round', () => {
    const overlap = scenarios(PACE, []).find((s) => s.classes.includes('delete-overlaps-create'))!;
    expect(formatRecipe(overlap.steps)).toBe(
      'create prod/db; write prod/db; delete prod/db + create prod/web after 30ms; ' +
        'create dev/db; write dev/db; create dev/web + delete dev/db after 100ms',
    );
  });

  it('restores volumes made with each of mkdir parameters, probing that the plugin takes them', () => {
    const restores = scenarios(PACE, mkdirParameterSets(0, 0)).filter((s) =>
      s.classes.includes('restore-with-parameters'),
    );
    expect(restores.map((s) => formatRecipe(s.steps))).toEqual([
      'create db mode=0700; write db; restore db',
      'create db uid=65534; write db; restore db',
      'create db gid=65534; write db; restore db',
      'create db mode=0700 uid=65534 gid=65534; write db; restore db',
    ]);
    expect(restores.every((s) => s.probe)).toBe(true);
    expect(mkdirParameterSets(1000, 1000)[3]).toEqual({ mode: '0700', uid: '1000', gid: '1000' });
  });

  it('keeps every scenario short, and each one a recipe --replay reads back', () => {
    for (const scenario of scenarios(PACE, mkdirParameterSets(0, 0))) {
      const recipe = formatRecipe(scenario.steps);
      expect(formatRecipe(parseRecipe(recipe))).toBe(recipe);
      expect(scenario.steps.length, recipe).toBeLessThanOrEqual(9);
    }
  });
});
