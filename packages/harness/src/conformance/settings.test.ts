import { describe, expect, it, test } from 'vitest';
import {
  DEFAULT_EXPLORE_RUNS,
  InvalidSettingsError,
  MAX_EXPLORE_RUNS,
  parseParameterPairs,
  resolveSettings,
} from './settings.js';

describe('suite settings', () => {
  test('sizes are read as Nomad reads them, and default to unset', () => {
    expect(resolveSettings({ capacityMin: '10MiB', capacityMax: '1GB' })).toMatchObject({
      repeat: 5,
      parameters: null,
      capacityMin: 10485760n,
      capacityMax: 1000000000n,
      expansionSize: 0n,
      capacityFloor: 0n,
    });
  });

  test('a declared floor is read as a size, and a capacity-max below it or a floor past the bound is refused', () => {
    expect(resolveSettings({ capacityFloor: '300MiB' }).capacityFloor).toBe(300n * 1024n * 1024n);
    expect(() => resolveSettings({ capacityFloor: '300MiB', capacityMax: '200MiB' })).toThrow(
      /capacity-max \(200 MiB .*\) is below capacity-floor \(300 MiB .*\): the plugin declares it makes no volume that small/,
    );
    expect(() => resolveSettings({ capacityFloor: '2GiB' })).toThrow(
      /capacity-floor .* is larger than dhv check's default bound/,
    );
  });

  test('an expansion size must be larger than capacity_min', () => {
    expect(resolveSettings({ capacityMin: '10MiB', expansionSize: '20MiB' }).expansionSize).toBe(20971520n);
    expect(() => resolveSettings({ capacityMin: '10MiB', expansionSize: '10MiB' })).toThrow(
      /expansion-size .* must be larger than capacity-min/,
    );
  });

  test('a maximum below the minimum, a bad size or a repeat below 1 is refused with the setting named', () => {
    expect(() => resolveSettings({ capacityMin: '2GiB', capacityMax: '1GiB' })).toThrow(/capacity-max/);
    expect(() => resolveSettings({ capacityMin: 'lots' })).toThrow(/capacity-min: invalid size "lots"/);
    expect(() => resolveSettings({ repeat: 0 })).toThrow(/repeat/);
  });

  test('nothing is asked past --capacity-max, else past the default bound of 1 GiB', () => {
    expect(() => resolveSettings({ capacityMin: '2GiB' })).toThrow(
      /capacity-min \(2\.0 GiB \(2147483648 bytes\)\) is larger than dhv check's default bound of 1\.0 GiB .*: give --capacity-max to allow more/,
    );
    expect(() => resolveSettings({ capacityMax: '64MiB', expansionSize: '128MiB' })).toThrow(
      /expansion-size .* is larger than capacity-max/,
    );
    expect(resolveSettings({ capacityMin: '2GiB', capacityMax: '4GiB' }).capacityMin).toBe(2n ** 31n);
  });

  test('declared features are known ones, in one order, and none unless given', () => {
    expect(resolveSettings({}).supports).toEqual([]);
    expect(resolveSettings({ supports: ['expansion', 'expansion'] }).supports).toEqual(['expansion']);
    expect(() => resolveSettings({ supports: ['expansion', 'shrinking'] })).toThrow(
      /supports: "shrinking" is not a feature dhv check knows; known: expansion/,
    );
  });

  test('--param pairs split at the first "=", and a pair without one is refused', () => {
    expect(parseParameterPairs(['mode=0750', 'opts=a=b'])).toEqual({ mode: '0750', opts: 'a=b' });
    expect(parseParameterPairs([])).toBeNull();
    expect(() => parseParameterPairs(['mode'])).toThrow(/expected key=value/);
  });
});

describe("the explorer's budget", () => {
  it('is a number of sequences, the default unless given, whatever the time they take', () => {
    expect(resolveSettings().explore.runs).toBe(DEFAULT_EXPLORE_RUNS);
    expect(resolveSettings({ runs: 3, seed: 7 }).explore).toMatchObject({ runs: 3, seed: 7 });
    expect(resolveSettings().explore.systematic).toBe(true);
    expect(resolveSettings({ systematic: false }).explore.systematic).toBe(false);
    expect(() => resolveSettings({ runs: 0 })).toThrow(`runs must be a whole number from 1 to ${MAX_EXPLORE_RUNS}`);
    expect(() => resolveSettings({ runs: MAX_EXPLORE_RUNS + 1 })).toThrow(InvalidSettingsError);
  });

  it('refuses the old time budget, naming runs', () => {
    expect(() => resolveSettings({ exploreBudgetMs: 30_000 } as object)).toThrow(
      /exploreBudgetMs was removed: .*give runs \(default \d+\) instead/,
    );
  });
});
