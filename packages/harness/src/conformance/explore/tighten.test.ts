import { describe, expect, it } from 'vitest';
import { formatRecipe, parseRecipe, type Step } from './recipe.js';
import { tighten, type Break } from './tighten.js';

const CHECK = 'explore.calls-succeed';

/**
 * A plugin stand-in: the recipe breaks CHECK when `breaks` says so of the steps as they
 * would run (a step on a volume never created is left out, as the lab leaves it out).
 */
function fakeReplay(breaks: (recipe: string) => boolean) {
  const replays: string[] = [];
  const replay = async (recipe: readonly Step[]): Promise<Break | undefined> => {
    const created = new Set<string>();
    const ran = recipe.filter((step) => {
      if (step.kind === 'create' || step.kind === 'kill-create') created.add(step.volume.name);
      return !('volume' in step) || created.has(step.volume.name);
    });
    const text = formatRecipe(ran);
    replays.push(text);
    return breaks(text) ? { violation: { checkId: CHECK }, steps: ran } : undefined;
  };
  return { replay, replays };
}

const found = (recipe: string): Break => ({ violation: { checkId: CHECK }, steps: parseRecipe(recipe) });
const unlimited = { replays: 1000 };

describe('tightening a recipe', () => {
  it('drops every step a replay does not need, and makes the rest plainer', async () => {
    // A name guard that leaks: any create of a name after its delete fails.
    const { replay } = fakeReplay((r) => /create (\S+)\b.*delete \1\b.*create \1\b/.test(r));
    const tightened = await tighten(
      found('create web large; kill-create db; fill 3; restart; delete db + create web-1; fingerprint; create db'),
      replay,
      unlimited,
    );
    expect(formatRecipe(tightened.steps)).toBe('create db; delete db; create db');
  });

  it('keeps a fill that is all there is to it, and cuts one needed only for its first volume', async () => {
    const alone = fakeReplay((r) => /fill 12/.test(r));
    expect(formatRecipe((await tighten(found('create db; fill 12; delete db'), alone.replay, unlimited)).steps)).toBe(
      'fill 12',
    );
    const first = fakeReplay((r) => /create a; create b; delete a; fill/.test(r));
    const cut = await tighten(found('create a; create b; delete a; fill 12; restart'), first.replay, unlimited);
    expect(formatRecipe(cut.steps)).toBe('create a; create b; delete a; fill 1');
  });

  it('keeps calls at once that must be at once', async () => {
    const { replay } = fakeReplay((r) => /create a \+ create b/.test(r));
    const tightened = await tighten(found('create c; create a + create b + restore c'), replay, unlimited);
    expect(formatRecipe(tightened.steps)).toBe('create a + create b');
  });

  it('stops after its number of replays with what it has, however fast they were', async () => {
    const { replay, replays } = fakeReplay(() => true);
    const recipe = 'create a; create b; create c';
    expect(formatRecipe((await tighten(found(recipe), replay, { replays: 0 })).steps)).toBe(recipe);
    expect(replays).toEqual([]);
    expect(formatRecipe((await tighten(found(recipe), replay, { replays: 1 })).steps)).toBe('create a; create b');
    expect(replays).toHaveLength(1);
  });
});
