import { describe, expect, it } from 'vitest';
import { pickCapacity } from './capacity.js';
import { pluginFailureOf } from '../__fixtures__/plugin-failure.js';

const MIB = 1024n * 1024n;
const LOOP = { granularity: 512n, preferred: [MIB, 4096n] };

const failure = pluginFailureOf;

describe('pickCapacity', () => {
  it('makes capacity_min, else capacity_max, else the fallback', () => {
    expect(pickCapacity(10n * MIB, 20n * MIB)).toBe(10n * MIB);
    expect(pickCapacity(0n, 20n * MIB)).toBe(20n * MIB);
    expect(pickCapacity(0n, 0n, { fallback: 5n * MIB })).toBe(5n * MIB);
    expect(failure(() => pickCapacity(0n, 0n)).code).toBe('ECAPACITYREQUIRED');
  });

  it('rounds up to the coarsest unit that fits under capacity_max, else down to one above capacity_min', () => {
    expect(pickCapacity(MIB + 1n, 0n, LOOP)).toBe(2n * MIB);
    expect(pickCapacity(MIB + 1n, MIB + 5000n, LOOP)).toBe(MIB + 4096n);
    expect(pickCapacity(MIB + 1n, MIB + 600n, LOOP)).toBe(MIB + 512n);
    expect(failure(() => pickCapacity(MIB + 1n, MIB + 100n, LOOP)).code).toBe('ECAPACITYRANGE');
  });

  it("raises a small request to the plugin's minimum, and refuses a capacity_max below it, naming both", () => {
    const xfs = { minimum: 300n * MIB, granularity: 512n };
    expect(pickCapacity(16n * MIB, 0n, xfs)).toBe(300n * MIB);
    expect(pickCapacity(16n * MIB, GIB(1), xfs)).toBe(300n * MIB);
    const err = failure(() => pickCapacity(16n * MIB, 64n * MIB, xfs));
    expect(err.code).toBe('ECAPACITYTOOSMALL');
    expect(err.message).toBe(
      'this plugin makes volumes of at least 300 MiB, but capacity_max is 64 MiB; raise capacity_max to 300 MiB or more',
    );
  });
});

function GIB(n: number): bigint {
  return BigInt(n) * 1024n * MIB;
}
