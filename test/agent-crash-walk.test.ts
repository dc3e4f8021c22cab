import { execFile } from 'node:child_process';
import { mkdir, readdir, rm, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect } from 'vitest';
import { testWithAgent, volumeHcl, type TempAgent } from './support/dhv-agent.js';
import { InProcessAgent } from './support/agent-in-process.js';
import { runDhv } from './support/kit.js';

/**
 * Issue 34: every transition crash-consistent for the next command. Each transition (create,
 * update, rename, register, a register over a created volume, delete, restore, gc) runs again
 * and again from the same data dir, killed (SIGKILL, by itself: `$DHV_TEST_KILL_AT_STEP`) right
 * after its 1st, 2nd, ... durable change of client state, until it runs to its end; after each
 * kill the very next plain commands (no restart) must read a true state: every volume on the
 * node has its record, names are unique, a name is refused only for a volume that has a
 * record, and every volume can be deleted, which frees its name and its folder.
 *
 * What a transition needs is made once through the CLI, and each point starts from a copy
 * of that data dir (`cp -a`: modes, links and times kept, at the same path, so the records'
 * paths hold): a point costs the killed command and the judge's commands, nothing more.
 */

const it = testWithAgent();
const execFileAsync = promisify(execFile);

interface Status {
  ID: string;
  Name: string;
}

async function killedAt(agent: TempAgent, step: number, args: readonly string[]): Promise<boolean> {
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

/**
 * The invariants, judged right after a kill. The very next command is a real `dhv` (its
 * start-up finishes what the killed one left in its cleanup journal, then it reads); the
 * rest is the same library calls the commands make, in this process (InProcessAgent): a
 * point costs its killed `dhv` and one more, not seven.
 */
async function judge(agent: TempAgent, names: readonly string[], where: string): Promise<void> {
  const volumes = await agent.json<Status[]>('volume', 'status');
  const next = new InProcessAgent(agent.dataDir);
  const ids = new Set(volumes.map((v) => v.ID));
  const byName = volumes.map((v) => v.Name);
  expect(new Set(byName).size, `${where}: names unique`).toBe(byName.length);
  const node = await next.node();
  for (const [name, v] of Object.entries(node.HostVolumes))
    expect(ids.has(v.ID), `${where}: ${name} on the node has its record`).toBe(true);
  // A new volume of each name: refused only for a volume that has a record, made only for a name none has.
  const after = [...volumes];
  for (const name of names) {
    const made = await next.create<Status>(await spec(agent, name)).catch((err: Error) => err);
    if (!(made instanceof Error)) {
      expect(byName, `${where}: a second volume named "${name}" made`).not.toContain(name);
      after.push(made);
      continue;
    }
    const holder = /volume ([0-9a-f-]{36})/.exec(made.message)?.[1];
    expect(holder && ids.has(holder), `${where}: "${name}" refused for ${holder}: ${made.message}`).toBe(true);
  }
  // Everything can be deleted, and then no record, no published volume and no volume's folder is left.
  for (const v of after) await next.delete(v.ID);
  expect((await next.node()).HostVolumes, where).toEqual({});
  const records = join(agent.dataDir, 'client', 'host_volumes');
  expect(
    (await readdir(records)).filter((f) => !f.startsWith('.') && f.endsWith('.json')),
    `${where}: records left`,
  ).toEqual([]);
  expect(await readdir(agent.volumesDir).catch(() => []), `${where}: folders left in the volumes dir`).toEqual([]);
}

/** Walks one transition from the data dir as it is now, each point from a copy of it; returns how many points were walked. */
async function walk(agent: TempAgent, names: readonly string[], args: readonly string[]): Promise<number> {
  const template = join(agent.dir, 'template');
  await execFileAsync('cp', ['-a', agent.dataDir, template]);
  const what = args.slice(0, 2).join(' ');
  for (let step = 1; step < 40; step++) {
    await rm(agent.dataDir, { recursive: true, force: true });
    await execFileAsync('cp', ['-a', template, agent.dataDir]);
    if (!(await killedAt(agent, step, args))) {
      await judge(agent, names, `${what} run to its end`);
      console.log(`crash walk: ${what}: ${step - 1} points walked, then run to its end`);
      return step - 1;
    }
    await judge(agent, names, `${what} killed after durable change ${step}`);
  }
  throw new Error(`${what} never ran to its end`);
}

async function make(agent: TempAgent, name: string): Promise<string> {
  return (await agent.json<{ Volume: { ID: string } }>('volume', 'create', await spec(agent, name))).Volume.ID;
}

async function registerSpec(agent: TempAgent, name: string, id?: string): Promise<string> {
  const folder = join(agent.dir, `registered-${name}`);
  await mkdir(folder, { recursive: true });
  return agent.file(`${name}-register.hcl`, volumeHcl({ name, host_path: folder, ...(id ? { id } : {}) }));
}

// Each point costs two `dhv` runs and what the judge does in process: minutes per transition on a loaded machine.
const WALK_MS = 1_800_000;

describe.concurrent('every point of every transition, killed, leaves a state the next command reads right', () => {
  it(
    'create',
    async ({ agent }) => {
      await agent.json('agent', 'restart');
      expect(await walk(agent, ['c'], ['volume', 'create', await spec(agent, 'c')])).toBeGreaterThan(0);
    },
    WALK_MS,
  );

  it(
    'update',
    async ({ agent }) => {
      const id = await make(agent, 'u');
      expect(await walk(agent, ['u'], ['volume', 'create', await spec(agent, 'u', id)])).toBeGreaterThan(0);
    },
    WALK_MS,
  );

  it(
    'rename',
    async ({ agent }) => {
      const id = await make(agent, 'a');
      expect(await walk(agent, ['a', 'b'], ['volume', 'create', await spec(agent, 'b', id)])).toBeGreaterThan(0);
    },
    WALK_MS,
  );

  it(
    'register',
    async ({ agent }) => {
      await agent.json('agent', 'restart');
      expect(await walk(agent, ['r'], ['volume', 'register', await registerSpec(agent, 'r')])).toBeGreaterThan(0);
    },
    WALK_MS,
  );

  it(
    'register over a created volume',
    async ({ agent }) => {
      const id = await make(agent, 'o');
      expect(await walk(agent, ['o'], ['volume', 'register', await registerSpec(agent, 'o', id)])).toBeGreaterThan(0);
    },
    WALK_MS,
  );

  it(
    'delete',
    async ({ agent }) => {
      const id = await make(agent, 'd');
      expect(await walk(agent, ['d'], ['volume', 'delete', id])).toBeGreaterThan(0);
    },
    WALK_MS,
  );

  it(
    'restore',
    async ({ agent }) => {
      const renamed = await make(agent, 'y');
      // A rename leaves the old name kept until a restart: the restart has claims to change.
      await agent.json('volume', 'create', await spec(agent, 'z', renamed));
      await agent.json('volume', 'register', await registerSpec(agent, 'w'));
      // A create killed right after its claim leaves a claim no record names: the restart drops it.
      expect(await killedAt(agent, 1, ['volume', 'create', await spec(agent, 'k')])).toBe(true);
      expect(await walk(agent, ['y', 'z', 'w', 'k'], ['agent', 'restart'])).toBeGreaterThan(1);
    },
    WALK_MS,
  );

  it(
    'gc',
    async ({ agent }) => {
      // What a create killed after its plugin ran and before its record leaves: its folder and its name's claim.
      const id = await make(agent, 'g');
      await unlink(join(agent.dataDir, 'client', 'host_volumes', `${id}.json`));
      expect(await walk(agent, ['g'], ['agent', 'gc', '--remove'])).toBeGreaterThan(0);
    },
    WALK_MS,
  );
});
