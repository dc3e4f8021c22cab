import { describe, expect, test } from 'vitest';
import { parseParameterPairs, resolveSettings } from './settings.js';

describe('suite settings', () => {
  test('sizes are read as Nomad reads them, and default to unset', () => {
    expect(resolveSettings({ capacityMin: '10MiB', capacityMax: '1GB' })).toMatchObject({
      repeat: 5,
      parameters: null,
      capacityMin: 10485760n,
      capacityMax: 1000000000n,
      expansionSize: 0n,
    });
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

  test('--param pairs split at the first "=", and a pair without one is refused', () => {
    expect(parseParameterPairs(['mode=0750', 'opts=a=b'])).toEqual({ mode: '0750', opts: 'a=b' });
    expect(parseParameterPairs([])).toBeNull();
    expect(() => parseParameterPairs(['mode'])).toThrow(/expected key=value/);
  });
});
