import { describe, expect, it } from 'vitest';
// @ts-expect-error: plain JavaScript without types, run by node in `npm run bench`
import * as lib from '../bench/lib.mjs';

describe('bench/lib.mjs', () => {
  it('computes median, min and max', () => {
    expect(lib.median([3, 1, 2])).toBe(2);
    expect(lib.median([4, 1, 3, 2])).toBe(2.5);
    expect(lib.min([3, 1, 2])).toBe(1);
    expect(lib.max([3, 1, 2])).toBe(3);
    expect(() => lib.median([])).toThrow(/no samples/);
  });

  it("builds the agent's environment from the SDK, nothing else", () => {
    expect(lib.agentEnv('fingerprint')).toEqual({ DHV_OPERATION: 'fingerprint' });
    const env = lib.agentEnv('create', {
      volumesDir: '/v',
      volumeName: 'n',
      volumeId: '5b8a2a5e-8f0a-4c8e-9a4f-0c7d3f2b1a99',
      nodeId: 'x',
    });
    expect(env).toMatchObject({ DHV_OPERATION: 'create', DHV_PARAMETERS: 'null', DHV_CAPACITY_MIN_BYTES: '0' });
    expect(Object.keys(env).every((k) => k.startsWith('DHV_'))).toBe(true);
  });

  it('returns one sample per measured run, after the warm-up runs', async () => {
    const samples = await lib.timeProcess('/bin/true', [], { runs: 4, warmup: 1 });
    expect(samples).toHaveLength(4);
    expect(samples.every((ms: number) => ms > 0)).toBe(true);
  });

  it('fails when the process fails, rather than timing a failure', async () => {
    await expect(lib.timeProcess('/bin/sh', ['-c', 'echo nope >&2; exit 3'], { runs: 1, warmup: 0 })).rejects.toThrow(
      /failed \(exit status 3\): nope/,
    );
  });
});
