import { describe, expect } from 'vitest';
import { testWithAgent, volumeHcl, type TempAgent } from './support/dhv-agent.js';
import { runDhv } from './support/kit.js';

/**
 * Issue 34: every transition crash-consistent for the next command. Each transition runs
 * again and again, killed (SIGKILL, by itself: `$DHV_TEST_KILL_AT_STEP`) right after its
 * 1st, 2nd, ... durable change of client state, until it runs to its end; after each kill
 * the very next plain commands (no restart) must read a true state: every volume on the
 * node has its record, names are unique, a name is refused only for a volume that has a
 * record, and the volume can be deleted, which frees its name.
 */

const it = testWithAgent();

interface Status {
  ID: string;
  Name: string;
}

async function killedAt(agent: TempAgent, step: number, ...args: string[]): Promise<boolean> {
  const run = await runDhv([...args, '--data-dir', agent.dataDir], {
    cwd: agent.dir,
    env: { DHV_DATA_DIR: undefined, DHV_TEST_KILL_AT_STEP: String(step) },
  });
  if (run.exitCode === 0) return false;
  expect(run.signal, `${args.join(' ')} at step ${step}: ${run.stderr}`).toBe('SIGKILL');
  return true;
}

async function spec(agent: TempAgent, name: string, id?: string): Promise<string> {
  return agent.file(`${name}-${id ?? 'new'}.hcl`, volumeHcl({ name, plugin_id: 'mkdir', ...(id ? { id } : {}) }));
}

/** The invariants, judged by plain commands right after a kill. */
async function judge(agent: TempAgent, names: readonly string[], where: string): Promise<void> {
  const volumes = await agent.json<Status[]>('volume', 'status');
  const ids = new Set(volumes.map((v) => v.ID));
  const byName = volumes.map((v) => v.Name);
  expect(new Set(byName).size, `${where}: names unique`).toBe(byName.length);
  const node = await agent.json<{ HostVolumes: Record<string, { ID: string }> }>('node', 'status');
  for (const [name, v] of Object.entries(node.HostVolumes))
    expect(ids.has(v.ID), `${where}: ${name} on the node has its record`).toBe(true);
  // A new volume of each name: refused only for a volume that has a record.
  for (const name of names) {
    const made = await agent.dhv('volume', 'create', await spec(agent, name), '--json');
    if (made.exitCode === 0) continue;
    const holder = /volume ([0-9a-f-]{36})/.exec(made.stderr)?.[1];
    expect(holder && ids.has(holder), `${where}: "${name}" refused for ${holder}: ${made.stderr}`).toBe(true);
  }
  const after = await agent.json<Status[]>('volume', 'status');
  expect(new Set(after.map((v) => v.Name)).size, `${where}: names unique after the creates`).toBe(after.length);
  // Everything can be deleted, and then every name is free.
  for (const v of after) await agent.json('volume', 'delete', v.ID);
  expect(await agent.json('volume', 'status'), where).toEqual([]);
  expect((await agent.json<{ HostVolumes: object }>('node', 'status')).HostVolumes, where).toEqual({});
}

/** Walks one transition: `prepare` makes what it needs, `run` gives its command; returns how many points were walked. */
async function walk(agent: TempAgent, names: readonly string[], prepare: () => Promise<string[]>): Promise<number> {
  await agent.json('agent', 'restart');
  for (let step = 1; step < 40; step++) {
    const args = await prepare();
    if (!(await killedAt(agent, step, ...args))) {
      await judge(agent, names, `${args[0]} ${args[1]} run to its end`);
      return step - 1;
    }
    await judge(agent, names, `${args[0]} ${args[1]} killed after durable change ${step}`);
    console.log(
      `crash walk: ${args[0]} ${args[1]} killed after durable change ${step}: the next commands read it right`,
    );
  }
  throw new Error('the transition never ran to its end');
}

async function make(agent: TempAgent, name: string): Promise<string> {
  return (await agent.json<{ Volume: { ID: string } }>('volume', 'create', await spec(agent, name))).Volume.ID;
}

// Each point costs about ten `dhv` runs: minutes per transition on a loaded machine.
const WALK_MS = 1_800_000;

describe.concurrent('every point of every transition, killed, leaves a state the next command reads right', () => {
  it(
    'create',
    async ({ agent }) => {
      expect(await walk(agent, ['c'], async () => ['volume', 'create', await spec(agent, 'c')])).toBeGreaterThan(0);
    },
    WALK_MS,
  );

  it(
    'update',
    async ({ agent }) => {
      const points = await walk(agent, ['u'], async () => [
        'volume',
        'create',
        await spec(agent, 'u', await make(agent, 'u')),
      ]);
      expect(points).toBeGreaterThan(0);
    },
    WALK_MS,
  );

  it(
    'rename',
    async ({ agent }) => {
      const points = await walk(agent, ['a', 'b'], async () => [
        'volume',
        'create',
        await spec(agent, 'b', await make(agent, 'a')),
      ]);
      expect(points).toBeGreaterThan(0);
    },
    WALK_MS,
  );

  it(
    'register',
    async ({ agent }) => {
      const points = await walk(agent, ['r'], async () => [
        'volume',
        'register',
        await agent.file('r.hcl', volumeHcl({ name: 'r', host_path: agent.dir })),
      ]);
      expect(points).toBeGreaterThan(0);
    },
    WALK_MS,
  );

  it(
    'delete',
    async ({ agent }) => {
      expect(await walk(agent, ['d'], async () => ['volume', 'delete', await make(agent, 'd')])).toBeGreaterThan(0);
    },
    WALK_MS,
  );
});
