import { describe, expect, it } from 'vitest';
import { formatRecipe, parseRecipe, RecipeError } from './recipe.js';

describe('replay recipes', () => {
  it('read back exactly as they are printed', () => {
    const recipe =
      'create db; create prod/db large; kill-create web; create web; restore db; cleanup-delete prod/db; ' +
      'create db-1 + delete db + restore web; restart; fill 10; fingerprint; delete web';
    expect(formatRecipe(parseRecipe(recipe))).toBe(recipe);
  });

  it('carry kill points, parameters, data and calls started later', () => {
    const recipe =
      'kill-create db at 900ms; create web mode=0700 uid=65534; write web; ' +
      'delete web + create prod/db after 40ms + kill-create dev/db at 12ms after 3ms; create db-1 large label=a%20b%3Bc';
    const steps = parseRecipe(recipe);
    expect(formatRecipe(steps)).toBe(recipe);
    expect(steps[0]).toEqual({ kind: 'kill-create', volume: { namespace: 'default', name: 'db' }, killAtMs: 900 });
    expect(steps[4]).toMatchObject({ large: true, parameters: { label: 'a b;c' } });
  });

  it('carry a restore run under a crowded mount table', () => {
    expect(parseRecipe('restore prod/db crowded')).toEqual([
      { kind: 'restore', volume: { namespace: 'prod', name: 'db' }, crowded: true },
    ]);
    expect(formatRecipe(parseRecipe('create db; restore db crowded; restore db'))).toBe(
      'create db; restore db crowded; restore db',
    );
  });

  it("carry kills at the plugin's own first write, rename and mount, and a volumes dir made under a host condition", () => {
    const recipe = 'volumes-dir long; kill-create db at write; create web + kill-create prod/db at mount after 5ms';
    const steps = parseRecipe(`volumes-dir other-fs; ${recipe.slice('volumes-dir long; '.length)}`);
    expect(steps[0]).toEqual({ kind: 'volumes-dir', condition: 'other-fs' });
    expect(steps[1]).toEqual({ kind: 'kill-create', volume: { namespace: 'default', name: 'db' }, killAt: 'write' });
    expect(parseRecipe('kill-create web at rename')[0]).toMatchObject({ killAt: 'rename' });
    expect(formatRecipe(parseRecipe(recipe))).toBe(recipe);
  });

  it('name the namespace only when it is not default', () => {
    expect(parseRecipe('delete dev/db; delete db')).toEqual([
      { kind: 'delete', volume: { namespace: 'dev', name: 'db' } },
      { kind: 'delete', volume: { namespace: 'default', name: 'db' } },
    ]);
  });

  it.each([
    ['', /no steps/],
    ['create', /give one volume name/],
    ['resize db', /unknown step/],
    ['fill ten', /fill takes a number/],
    ['create db + delete db', /different volumes/],
    ['restart now', /takes nothing after it/],
    ['create db after 40ms', /one of calls run at once/],
    ['kill-create db at soon', /time in milliseconds/],
    ['create db mode', /parameters, e.g./],
    ['restore db crowdd', /"crowded" to run it under a crowded mount table/],
    ['volumes-dir short', /volumes-dir takes one of long, other-fs/],
    [
      'kill-create db at umount',
      /time in milliseconds at the end, e.g. "at 40ms", or the plugin's first write, rename, mount/,
    ],
  ])('refuse %j, saying why', (recipe, why) => {
    expect(() => parseRecipe(recipe)).toThrow(RecipeError);
    expect(() => parseRecipe(recipe)).toThrow(why);
  });
});
