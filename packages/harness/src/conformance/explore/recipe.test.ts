import { describe, expect, it } from 'vitest';
import { formatRecipe, parseRecipe, RecipeError } from './recipe.js';

describe('replay recipes', () => {
  it('read back exactly as they are printed', () => {
    const recipe =
      'create db; create prod/db large; kill-create web; create web; restore db; cleanup-delete prod/db; ' +
      'create db-1 + delete db + restore web; restart; fill 10; fingerprint; delete web';
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
  ])('refuse %j, saying why', (recipe, why) => {
    expect(() => parseRecipe(recipe)).toThrow(RecipeError);
    expect(() => parseRecipe(recipe)).toThrow(why);
  });
});
