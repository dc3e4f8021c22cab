import { describe, expect, it } from 'vitest';
import { createSpeed, deadlineWords, type CreateTime } from './create-speed.js';

const MiB = 1024n * 1024n;
const at = (mib: bigint, ...ms: number[]): CreateTime[] =>
  ms.map((durationMs) => ({ capacityBytes: mib * MiB, durationMs }));

describe("a plugin's create speed, from its own creates", () => {
  it('is the time per byte between the capacities it made, and says which volumes reach the deadlines', () => {
    // 100 ms of fixed work, then 6 s per GiB (about 188 ms per 32 MiB).
    const times = [...at(0n, 100, 101, 99), ...at(32n, 287, 288)];
    const speed = createSpeed(times);
    expect(speed.measured).toBe(true);
    if (!speed.measured) return;
    expect(speed.msPerGiB / 1000).toBeCloseTo(6, 0);
    const words = deadlineWords(times);
    expect(words).toContain('restore gives all volumes one 50 s deadline from its start');
    expect(words).toContain('create and delete are killed at 60 s');
    expect(words).toMatch(/This create takes about 6\.0 s per GiB \(measured on its 5 creates in this run\)/);
    expect(words).toMatch(/volumes over about 10 GiB meet this at any create, and over about 8\.\d GiB at a restore/);
  });

  it('says plainly that it cannot be measured when the creates take as long whatever their capacity', () => {
    const flat = [...at(0n, 5, 7, 6), ...at(32n, 6, 5)];
    expect(createSpeed(flat).measured).toBe(false);
    expect(deadlineWords(flat)).toContain(
      "How long this plugin's create takes per byte cannot be measured: its creates in this run took about as long whatever their capacity (6 ms at 0 B, 6 ms at 32 MiB), so no time per byte shows. At most it takes 0.18 s per GiB",
    );
  });

  it('cannot be measured from one capacity, nor from none', () => {
    // From one capacity, only a bound: were all of the time spent on bytes, 305 ms per 32 MiB.
    expect(deadlineWords(at(512n, 2400, 2380))).toContain(
      'cannot be measured: all of its 2 creates in this run had one capacity (2390 ms at 512 MiB), so no time per byte shows. At most it takes 4.8 s per GiB (were all of its time spent on bytes): only volumes over about 13 GiB meet this at any create, and over about 10 GiB at a restore, unless the disk is slower than in this run',
    );
    expect(deadlineWords([])).toContain('cannot be measured: no create of a new volume answered in this run;');
  });

  it("does not take a busy host's noise for speed, nor miss a speed because of it", () => {
    expect(createSpeed([...at(0n, 10, 40), ...at(32n, 30, 35)]).measured).toBe(false);
    expect(deadlineWords([...at(0n, 100), ...at(32n, 300)])).toContain(
      'cannot be measured: it made too few volumes of the smallest and the largest capacity in this run (100 ms at 0 B, 300 ms at 32 MiB)',
    );
    expect(createSpeed([...at(0n, 5, 4, 9), ...at(32n, 7, 6)]).measured).toBe(false);
    // Measured under load: some smaller creates slower than some larger, the medians far apart.
    expect(createSpeed([...at(128n, 640, 500, 3100), ...at(256n, 2600, 2400, 900)]).measured).toBe(true);
  });
});
