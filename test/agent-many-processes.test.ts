import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempAgent, volumeHcl, type TempAgent } from './support/dhv-agent.js';
import { testSeed } from './support/seed.js';
import { seededRandom } from './support/seeded-random.js';
import { isUuid } from '@dhv/sdk';

/**
 * 8 `dhv` processes at once on one data dir, each doing a seeded random series of creates,
 * deletes, restarts (plain and --reboot) and gc, for a fixed number of rounds; then the
 * invariants of one agent: names unique, every record's volume there, every volume there
 * known or gc-able, nothing ready that is not there.
 */

const WORKERS = 8;
const ROUNDS = 3;
const NAMES = ['a', 'b', 'c', 'd', 'e', 'f'];
const seed = testSeed('DHV_MANY_SEED', 20261201, 'test/agent-many-processes.test.ts');

let agent: TempAgent;
beforeEach(async () => {
  agent = await tempAgent();
});
afterEach(async () => {
  await agent.cleanup();
});

interface Status {
  ID: string;
  Name: string;
  State: string;
  /** Only in one volume's status, not in the list. */
  HostPath: string;
}

describe('8 dhv processes on one data dir', () => {
  it('behave as one agent: after random creates, deletes, restarts and gc the invariants hold', async () => {
    const random = seededRandom(seed);
    const specs = new Map<string, string>();
    for (const name of NAMES) specs.set(name, await agent.file(`${name}.hcl`, volumeHcl({ name, plugin_id: 'mkdir' })));
    await agent.json('agent', 'restart');
    // Every worker's series is drawn up front from the seed, so a run replays exactly.
    const series = Array.from({ length: WORKERS }, () =>
      Array.from({ length: ROUNDS }, () => {
        const pick = random();
        const name = NAMES[Math.floor(random() * NAMES.length)]!;
        if (pick < 0.45) return ['volume', 'create', specs.get(name)!];
        if (pick < 0.7) return ['delete', name];
        if (pick < 0.8) return ['agent', 'restart'];
        if (pick < 0.88) return ['agent', 'restart', '--reboot'];
        return ['agent', 'gc', '--remove'];
      }),
    );
    const codes: number[] = [];
    await Promise.all(
      series.map(async (ops) => {
        for (const op of ops) {
          if (op[0] === 'delete') {
            const id = (await agent.json<Status[]>('volume', 'status')).find((v) => v.Name === op[1])?.ID;
            if (id) codes.push((await agent.dhv('volume', 'delete', id)).exitCode ?? -1);
            continue;
          }
          const run = await agent.dhv(...op);
          codes.push(run.exitCode ?? -1);
          // Only a lost race for a name may fail: never a lock, a corrupt state or a crash.
          if (run.exitCode !== 0 && op[1] !== 'delete')
            expect(run.stderr, op.join(' ')).toMatch(
              /volume name already exists|nodes had existing volume|no volume with ID/,
            );
        }
      }),
    );
    expect(codes.length).toBeGreaterThan(0);

    // Quiet now: one more restart, then the invariants.
    await agent.json('agent', 'restart');
    const volumes = await agent.json<Status[]>('volume', 'status');
    const names = volumes.map((v) => v.Name);
    expect(new Set(names).size).toBe(names.length);
    for (const { ID } of volumes) {
      // The list is Nomad's stub, without the path: one volume's status has it.
      const v = await agent.json<Status>('volume', 'status', ID);
      expect(existsSync(v.HostPath), `${v.Name} at ${v.HostPath}`).toBe(true);
      expect(v.State, v.Name).toBe('ready');
    }
    const gc = await agent.json<{ Orphans: Array<{ ID: string; Blocker: string }> }>('agent', 'gc');
    for (const o of gc.Orphans) expect(o.Blocker, o.ID).toBe('');
    const known = new Set([...volumes.map((v) => v.ID), ...gc.Orphans.map((o) => o.ID)]);
    const onDisk = (await readdir(agent.volumesDir).catch(() => [] as string[])).filter(isUuid);
    for (const id of onDisk) expect(known.has(id), id).toBe(true);
    await agent.json('agent', 'gc', '--remove');
    const left = (await readdir(agent.volumesDir).catch(() => [] as string[])).filter(isUuid).sort();
    expect(left).toEqual(volumes.map((v) => v.ID).sort());
  }, 240_000);
});
