import { existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { InProcessAgent } from './support/agent-in-process.js';
import { bashPlugin, testWithAgent, volumeHcl, type TempAgent } from './support/dhv-agent.js';
import { runDhv, skipUnless, tool } from './support/kit.js';
import { GATED_PLUGIN, Gates, dhvUnderStrace, finished, waitingForLock } from './support/gates.js';
import { processTree, signalProcesses } from './support/processes.js';

/**
 * Issue 34: one volume, one line of operations. Each race runs in its recipe's order, a
 * plugin run held at a FIFO gate and a waiting `dhv` seen waiting (its flock(1) child), no
 * sleep; each kill lands at a chosen instant (at a gate, or by strace at the first fsync of
 * the records folder, which comes right after a record's rename or unlink). After each, the
 * very next plain commands are judged, with no restart in between. Run against 9670b4d
 * (the code before this file): every test fails there, each on its bug.
 */

// Every test gets the gated plugin, also those that close no gate.
const it = testWithAgent().extend<{ gates: Gates }>({
  gates: [
    async ({ agent }, use) => {
      await agent.plugin('gated', GATED_PLUGIN);
      await use(new Gates(agent.dir));
    },
    { auto: true },
  ],
});

/** The message of a failed `--json` command. */
function errorOf(stderr: string): string {
  try {
    return (JSON.parse(stderr) as { error: { message: string } }).error.message;
  } catch {
    return stderr;
  }
}

interface Status {
  ID: string;
  Name: string;
  State: string;
}

async function spec(agent: TempAgent, name: string, id?: string): Promise<string> {
  return agent.file(`${name}-${id ?? 'new'}.hcl`, volumeHcl({ name, plugin_id: 'gated', ...(id ? { id } : {}) }));
}

/*
 * The set-ups before a race and the reads that judge it, once its `dhv` processes are done:
 * the library calls of `volume create`, `volume status` and `node status`, in this process
 * (InProcessAgent), each from the data dir as it is then. The racing and killed commands,
 * and every command whose own output is judged, are real `dhv` processes.
 */
async function create(agent: TempAgent, name: string): Promise<string> {
  return (await new InProcessAgent(agent.dataDir).create(await spec(agent, name))).ID;
}

async function volumes(agent: TempAgent): Promise<Status[]> {
  return new InProcessAgent(agent.dataDir).volumes<Status>();
}

/** The node's HostVolumes as `node status` reports them: name to volume ID. */
async function published(agent: TempAgent): Promise<Record<string, string>> {
  const node = await new InProcessAgent(agent.dataDir).node();
  return Object.fromEntries(Object.entries(node.HostVolumes).map(([name, v]) => [name, v.ID]));
}

/**
 * Runs `dhv <args>` under strace, which kills it (SIGKILL) at its first fsync of the records
 * folder: right after it renamed a record into place or unlinked one.
 */
async function killedAfterRecordChange(agent: TempAgent, ...args: string[]): Promise<number | null> {
  const path = join(agent.dataDir, 'client', 'host_volumes');
  return (await finished(dhvUnderStrace(agent, args, { path, syscall: 'fsync', signal: 'KILL' }))).code;
}

/** `dhv <args>` with its own lock wait. */
function dhvWaiting(agent: TempAgent, waitMs: number, ...args: string[]) {
  return runDhv([...args, '--data-dir', agent.dataDir], {
    cwd: agent.dir,
    env: { DHV_DATA_DIR: undefined, DHV_LOCK_WAIT_MS: String(waitMs) },
  });
}

describe.concurrent('one volume, one line of operations (issue 34)', () => {
  it('a delete that comes first wins over an update that waits for it: the volume does not come back', async ({
    agent,
    gates,
  }) => {
    const id = await create(agent, 'u');
    await gates.close('u', 'delete');
    const deleted = finished(agent.start('volume', 'delete', id, '--json'));
    await gates.reached('u', 'delete');
    const updateChild = agent.start('volume', 'create', await spec(agent, 'u', id), '--json');
    const updated = finished(updateChild);
    await waitingForLock(updateChild);
    await gates.open('u', 'delete');

    const [removed, update] = await Promise.all([deleted, updated]);

    expect(removed.code, removed.stderr).toBe(0);
    expect(update.code).not.toBe(0);
    expect(errorOf(update.stderr)).toContain(`cannot update volume "${id}": volume does not exist`);
    expect(await volumes(agent)).toEqual([]);
    expect(await published(agent)).toEqual({});
    expect(existsSync(join(agent.volumesDir, id))).toBe(false);
  });

  it('an update that renames, racing a delete, does not bring the volume back under its new name', async ({
    agent,
    gates,
  }) => {
    const id = await create(agent, 'old');
    await gates.close('old', 'delete');
    const deleted = finished(agent.start('volume', 'delete', id, '--json'));
    await gates.reached('old', 'delete');
    const updateChild = agent.start('volume', 'create', await spec(agent, 'new', id), '--json');
    const updated = finished(updateChild);
    await waitingForLock(updateChild);
    await gates.open('old', 'delete');

    const [removed, update] = await Promise.all([deleted, updated]);

    expect(removed.code, removed.stderr).toBe(0);
    expect(errorOf(update.stderr)).toContain(`cannot update volume "${id}": volume does not exist`);
    expect(await volumes(agent)).toEqual([]);
    expect(await published(agent)).toEqual({});
    expect(existsSync(join(agent.volumesDir, id))).toBe(false);
  });

  it('an update that comes first finishes, then the delete that waited for it deletes (as a real agent)', async ({
    agent,
    gates,
  }) => {
    const id = await create(agent, 'w');
    await gates.close('w', 'create');
    const updated = finished(agent.start('volume', 'create', await spec(agent, 'w', id), '--json'));
    await gates.reached('w', 'create');
    const deleteChild = agent.start('volume', 'delete', id, '--json');
    const deleted = finished(deleteChild);
    await waitingForLock(deleteChild);
    await gates.open('w', 'create');

    const [update, removed] = await Promise.all([updated, deleted]);

    expect(update.code, update.stderr).toBe(0);
    expect(JSON.parse(update.stdout).Volume.ID).toBe(id);
    expect(removed.code, removed.stderr).toBe(0);
    expect(gates.runs()).toEqual(['create w', 'delete w']);
    expect(await volumes(agent)).toEqual([]);
    expect(await published(agent)).toEqual({});
  });

  it('a second delete of one volume finds it gone and frees no name another volume holds since', async ({
    agent,
    gates,
  }) => {
    const id = await create(agent, 'd');
    await gates.close('d', 'delete');
    const first = finished(agent.start('volume', 'delete', id, '--json'));
    await gates.reached('d', 'delete');
    const secondChild = agent.start('volume', 'delete', id, '--json');
    const second = finished(secondChild);
    await waitingForLock(secondChild);
    await gates.open('d', 'delete');

    const [one, two] = await Promise.all([first, second]);

    expect(one.code, one.stderr).toBe(0);
    expect(two.code).not.toBe(0);
    expect(errorOf(two.stderr)).toContain(`no such volume: ${id}`);
    // The plugin's delete ran once: the second delete acted on nothing it had read before.
    expect(gates.runs()).toEqual(['delete d']);
    const again = await create(agent, 'd');
    expect((await agent.dhv('volume', 'create', await spec(agent, 'd'))).exitCode).not.toBe(0);
    expect((await volumes(agent)).map((v) => v.ID)).toEqual([again]);
  });

  describe.skipIf(skipUnless('kill windows by strace', tool('strace', 'strace')))('kill -9 windows', () => {
    it('a delete killed just after its record is unlinked: the next commands see it deleted and the name free', async ({
      agent,
    }) => {
      const id = await create(agent, 'k');
      expect(await killedAfterRecordChange(agent, 'volume', 'delete', id)).not.toBe(0);

      expect(await agent.json('volume', 'status'), 'the very next command').toEqual([]);
      expect(await published(agent)).toEqual({});
      const made = await create(agent, 'k');
      expect(await published(agent)).toEqual({ k: made });
      expect((await volumes(agent)).map((v) => [v.ID, v.State])).toEqual([[made, 'ready']]);
    });

    it('an update renaming a to b killed while its plugin runs leaves b free and a with its volume', async ({
      agent,
      gates,
    }) => {
      const id = await create(agent, 'a');
      await gates.close('b', 'create');
      const renameChild = agent.start('volume', 'create', await spec(agent, 'b', id), '--json');
      const renamed = finished(renameChild);
      await gates.reached('b', 'create');
      renameChild.kill('SIGKILL');
      await renamed;
      await gates.open('b', 'create');

      const next = await agent.json<Status[]>('volume', 'status');
      expect(
        next.map((v) => [v.ID, v.Name]),
        'the very next command',
      ).toEqual([[id, 'a']]);
      const b = await create(agent, 'b');
      expect(await published(agent)).toEqual({ a: id, b });
      const a = await agent.dhv('volume', 'create', await spec(agent, 'a'));
      expect(a.stderr).toMatch(/volume name already exists on this node|nodes had existing volume/);
    });

    it('an update renaming a to b killed just after its record is written keeps both names with the volume, as a finished rename', async ({
      agent,
    }) => {
      const id = await create(agent, 'a');
      expect(await killedAfterRecordChange(agent, 'volume', 'create', await spec(agent, 'b', id))).not.toBe(0);

      const next = await agent.json<Status[]>('volume', 'status');
      expect(
        next.map((v) => [v.ID, v.Name]),
        'the very next command',
      ).toEqual([[id, 'b']]);
      for (const name of ['a', 'b']) {
        const other = await agent.dhv('volume', 'create', await spec(agent, name));
        expect(other.exitCode, `a new volume named ${name}`).not.toBe(0);
        expect(other.stderr).toMatch(/volume name already exists on this node|nodes had existing volume/);
      }
      // The volume can still be deleted, and both its names are then free.
      await agent.json('volume', 'delete', id);
      expect(await published(agent)).toEqual({});
      const a = await create(agent, 'a');
      const b = await create(agent, 'b');
      expect(await published(agent)).toEqual({ a, b });
    });
  });

  describe('waiting never blocks others', () => {
    it('a restart stopped while it waits for the agent keeps no one out, and goes on when continued', async ({
      agent,
      gates,
    }) => {
      await gates.close('a', 'create');
      const first = finished(agent.start('volume', 'create', await spec(agent, 'a'), '--json'));
      await gates.reached('a', 'create');
      const restartChild = agent.start('agent', 'restart', '--json');
      const restart = finished(restartChild);
      await waitingForLock(restartChild);
      const stopped = processTree(restartChild.pid!);
      signalProcesses(stopped, 'SIGSTOP');
      try {
        await gates.open('a', 'create');
        expect((await first).code).toBe(0);
        // Both would wait for the stopped restart for good (here: give up after 60 s) before.
        const other = await dhvWaiting(agent, 60_000, 'volume', 'create', await spec(agent, 'b'));
        expect(other.exitCode, other.stderr).toBe(0);
        const again = await dhvWaiting(agent, 60_000, 'agent', 'restart');
        expect(again.exitCode, again.stderr).toBe(0);
      } finally {
        signalProcesses(stopped, 'SIGCONT');
      }
      const restarted = await restart;
      expect(restarted.code, restarted.stderr).toBe(0);
      expect((await volumes(agent)).map((v) => [v.Name, v.State]).sort()).toEqual([
        ['a', 'ready'],
        ['b', 'ready'],
      ]);
    });

    it('AGENT_BUSY names the restart waiting ahead and the stopped create it waits for, with kill -CONT', async ({
      agent,
      gates,
    }) => {
      await gates.close('h', 'create');
      const createChild = agent.start('volume', 'create', await spec(agent, 'h'), '--json');
      const create = finished(createChild);
      await gates.reached('h', 'create');
      createChild.kill('SIGSTOP');
      let restart: ReturnType<typeof finished> | undefined;
      try {
        const restartChild = agent.start('agent', 'restart', '--json');
        restart = finished(restartChild);
        await waitingForLock(restartChild);
        const busy = await dhvWaiting(agent, 1500, 'volume', 'create', await spec(agent, 'i'));
        expect(busy.exitCode).not.toBe(0);
        expect(busy.stderr).toContain(`process ${restartChild.pid} (\`dhv agent restart`);
        expect(busy.stderr).toContain('waits for it ahead of this one, restarting the agent');
        expect(busy.stderr).toContain(`process ${createChild.pid} (\`dhv volume create`);
        expect(busy.stderr).toContain(`kill -CONT ${createChild.pid}`);
      } finally {
        createChild.kill('SIGCONT');
      }
      await gates.open('h', 'create');
      expect((await create).code).toBe(0);
      expect((await restart!).code).toBe(0);
    });
  });

  // Found by test/agent-one-line-random.test.ts (seed 1320309498, round 3). Nomad's servers keep
  // the volume's plugin on a register that names none (CanonicalizeForRegister), so its delete
  // still runs that plugin, which removes what the create made; before, dhv forgot the plugin,
  // the delete left the create's folder, and gc called it "not known to be a volume of this agent".
  describe("a transition that replaces a created volume's record strands nothing", () => {
    for (const plugin of ['mkdir', 'sh'])
      it(`a register over its ID keeps its plugin (${plugin}): the delete leaves nothing behind, and the registered folder stays`, async ({
        agent,
      }) => {
        if (plugin === 'sh') await agent.plugin('sh', bashPlugin());
        const { ID: id } = await new InProcessAgent(agent.dataDir).create(
          await agent.file('v.hcl', volumeHcl({ name: 'v', plugin_id: plugin })),
        );
        const createdFolder = join(agent.volumesDir, id);
        expect(existsSync(createdFolder)).toBe(true);
        const folder = join(agent.dir, 'registered');
        await mkdir(folder);
        await writeFile(join(folder, 'data'), 'kept');
        const register = await agent.file('r.hcl', volumeHcl({ name: 'v', id, host_path: folder }));
        await agent.json('volume', 'register', register);
        // Twice: a register over a registered volume keeps the plugin too.
        await agent.json('volume', 'register', register);

        const status = (
          await new InProcessAgent(agent.dataDir).volumes<Status & { PluginID: string; HostPath: string }>()
        ).filter((v) => v.ID === id);
        expect(status.map((v) => [v.PluginID, v.HostPath])).toEqual([[plugin, folder]]);
        expect(await published(agent)).toEqual({ v: id });
        await agent.json('agent', 'restart');
        expect((await volumes(agent)).map((v) => [v.ID, v.State])).toEqual([[id, 'ready']]);

        await agent.json('volume', 'delete', id);
        expect(await volumes(agent)).toEqual([]);
        expect(await published(agent)).toEqual({});
        expect(existsSync(createdFolder), 'the folder its create made').toBe(false);
        expect(readFileSync(join(folder, 'data'), 'utf8')).toBe('kept');
        const gc = await agent.dhv('agent', 'gc', '--remove', '--json');
        expect(gc.exitCode, gc.stdout + gc.stderr).toBe(0);
        expect(JSON.parse(gc.stdout)).toMatchObject({ Orphans: [], Removed: [], Failed: [] });
      });

    it("an update that changes its plugin leaves the first plugin's folder known to gc, which removes it once the volume is deleted", async ({
      agent,
    }) => {
      // A plugin that keeps its volumes outside the volumes dir: the built-in mkdir's folder is not its to remove.
      const elsewhere = join(agent.dir, 'elsewhere');
      await agent.plugin(
        'elsewhere',
        `#!/bin/bash
dir="${elsewhere}/$DHV_VOLUME_ID"
case "$1" in
  fingerprint) echo '{"version": "1.0.0"}' ;;
  create) /bin/mkdir -p "$dir" && echo "{\\"path\\": \\"$dir\\", \\"bytes\\": 0}" ;;
  delete) /bin/rm -rf "$dir"; echo '{}' ;;
esac
`,
      );
      const { ID: id } = await new InProcessAgent(agent.dataDir).create(
        await agent.file('p.hcl', volumeHcl({ name: 'p', plugin_id: 'mkdir' })),
      );
      await agent.json(
        'volume',
        'create',
        await agent.file('p2.hcl', volumeHcl({ name: 'p', id, plugin_id: 'elsewhere' })),
      );
      await agent.json('volume', 'delete', id);
      // As under Nomad, the delete ran only the volume's plugin now: the first plugin's folder is left...
      expect(existsSync(join(agent.volumesDir, id))).toBe(true);
      // ... and gc knows it for this agent's, and removes it.
      const gc = await agent.dhv('agent', 'gc', '--remove', '--json');
      expect(gc.exitCode, gc.stdout + gc.stderr).toBe(0);
      expect(JSON.parse(gc.stdout)).toMatchObject({ Removed: [id], Failed: [] });
      expect(existsSync(join(agent.volumesDir, id))).toBe(false);
    });
  });
});
