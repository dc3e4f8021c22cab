import { readFile, rename, truncate } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { bashPlugin, testWithAgent, volumeHcl, type TempAgent } from './support/dhv-agent.js';

/**
 * No plugin answer and no file on disk makes a data dir unreadable: what Go's decoder takes
 * from a plugin is recorded and read back, a record the state index last saw is read again
 * when its file changed in place, and a record that does not load affects its own volume alone.
 */
const it = testWithAgent();

/** A plugin whose create makes the folder and answers `bytes` as given (any JSON number). */
function pluginAnswering(bytes: string): string {
  return bashPlugin({
    createPrefix: `/bin/mkdir -p "$dir" || exit 1; echo "{\\"path\\": \\"$dir\\", \\"bytes\\": ${bytes}}"; exit 0`,
  });
}

async function create(agent: TempAgent, name: string, pluginId = 'mkdir'): Promise<string> {
  const out = await agent.json(
    'volume',
    'create',
    await agent.file(`${name}.hcl`, volumeHcl({ name, plugin_id: pluginId })),
  );
  return out.Volume.ID as string;
}

const recordOf = (agent: TempAgent, id: string) => join(agent.dataDir, 'client', 'host_volumes', `${id}.json`);

describe.concurrent('a plugin answer or a damaged file never makes the data dir unreadable', () => {
  it('records "bytes": -1 and the smallest int64 as Go decodes them, and shows them as Nomad does', async ({
    agent,
  }) => {
    await agent.plugin('minus-one', pluginAnswering('-1'));
    await agent.plugin('min-int64', pluginAnswering('-9223372036854775808'));
    const a = await create(agent, 'a', 'minus-one');
    const b = await create(agent, 'b', 'min-int64');
    // Twice: the first restart reads the files and writes the index, the second reads the index.
    for (let i = 0; i < 2; i++) {
      const restart = await agent.dhv('agent', 'restart');
      expect(restart.exitCode, restart.stderr).toBe(0);
      expect(restart.stdout).toContain('Restored 2 of 2 host volume(s)');
    }
    const status = await agent.dhv('volume', 'status', '--json');
    expect(status.exitCode, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/"CapacityBytes": -1\b/);
    expect((await agent.dhv('volume', 'status', b, '--json')).stdout).toMatch(
      /"CapacityBytes": -9223372036854775808\b/,
    );
    // Nomad's CLI prints humanize.IBytes(uint64(CapacityBytes)).
    expect((await agent.dhv('volume', 'status', a)).stdout).toMatch(/^Capacity\s+= 16 EiB$/m);
    expect((await agent.dhv('volume', 'status', b)).stdout).toMatch(/^Capacity\s+= 8\.0 EiB$/m);
    for (const id of [a, b]) expect((await agent.dhv('volume', 'delete', id)).exitCode).toBe(0);
    expect(await agent.json('volume', 'status')).toEqual([]);
  });

  it('reads a record cut short in place from its file, not from the index, and only that volume is affected', async ({
    agent,
  }) => {
    const a = await create(agent, 'a');
    const b = await create(agent, 'b');
    expect((await agent.dhv('agent', 'restart')).stdout).toContain('Restored 2 of 2');
    // The index now holds both records; the folder they are in does not change when a file is cut short in place.
    const file = recordOf(agent, a);
    await truncate(file, 20);
    const damaged = await readFile(file, 'utf8');
    const fix = `client state file ${file} is corrupt`;

    const restart = await agent.dhv('agent', 'restart');
    expect(restart.exitCode, restart.stderr).toBe(0);
    expect(restart.stdout).toContain('Restored 1 of 2 host volume(s)');
    expect(restart.stdout).toContain(`✗ Host volume "${a.slice(0, 8)}" unreadable: ${fix}`);
    expect(restart.stdout).toMatch(/repair the file, or move it out of/);
    const json = JSON.parse((await agent.dhv('agent', 'restart', '--json')).stdout);
    expect(json.Restored.map((v: { ID: string }) => v.ID)).toEqual([b]);
    expect(json.Unreadable).toEqual([
      { ID: a, File: file, Error: { code: 'STATE_CORRUPT', message: expect.any(String) } },
    ]);

    // Every other volume: listed, deleted, created; the damaged one is named with its file wherever it is asked for.
    const status = await agent.dhv('volume', 'status');
    expect(status.exitCode, status.stderr).toBe(0);
    expect(status.stdout).toContain(b.slice(0, 8));
    expect(status.stderr).toContain(fix);
    const node = await agent.json('node', 'status');
    expect(Object.keys(node.HostVolumes)).toEqual(['b']);
    for (const args of [
      ['volume', 'status', a],
      ['volume', 'delete', a],
    ]) {
      const run = await agent.dhv(...args);
      expect(run.exitCode, args.join(' ')).toBe(1);
      expect(run.stderr).toContain(fix);
    }
    const c = await create(agent, 'c');
    expect((await agent.json('volume', 'status', c)).State).toBe('ready');
    // Its name stays its own: a second "a" would be a duplicate once the file is repaired.
    const again = await agent.dhv(
      'volume',
      'create',
      await agent.file('a2.hcl', volumeHcl({ name: 'a', plugin_id: 'mkdir' })),
    );
    expect(again.exitCode).toBe(1);
    expect(again.stderr).toContain('volume name already exists on this node');
    // Nor is its folder an orphan for gc to remove.
    const gc = await agent.dhv('agent', 'gc', '--remove');
    expect(gc.exitCode, gc.stderr).toBe(0);
    expect(gc.stdout).not.toContain(a);
    expect((await agent.dhv('volume', 'delete', b)).exitCode).toBe(0);
    expect(await readFile(file, 'utf8')).toBe(damaged);

    // Moved out, as the error says: the node holds c alone, and the name is free again.
    await rename(file, join(agent.dir, 'a.json'));
    const after = await agent.dhv('agent', 'restart');
    expect(after.exitCode, after.stderr).toBe(0);
    expect(after.stdout).toContain('Restored 1 of 1 host volume(s)');
    expect((await agent.dhv('volume', 'create', join(agent.dir, 'a2.hcl'))).exitCode).toBe(0);
  });
});
