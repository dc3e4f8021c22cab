import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadAgentConfig } from '../config/agent-config.js';
import { Agent } from './agent.js';
import { removeTempDir, tempDir } from '../../../../test/support/kit.js';

/** Namespaces as the servers keep them, through an agent opened on a data dir of the test's own. */

let dir = '';
let agent: Agent | undefined;
afterEach(async () => {
  await agent?.shutdown();
  agent = undefined;
  if (dir) await removeTempDir(dir);
  dir = '';
});

async function open(): Promise<Agent> {
  dir = await tempDir('namespaces');
  agent = await Agent.open(await loadAgentConfig({ dataDir: join(dir, 'data'), env: {} }));
  return agent;
}

describe('namespaces', () => {
  it('start with default alone, at index 1, as every Nomad cluster does', async () => {
    const namespaces = (await open()).namespaces();
    expect(await namespaces.list()).toEqual([
      { Name: 'default', Description: 'Default shared namespace', CreateIndex: 1, ModifyIndex: 1 },
    ]);
    await expect(namespaces.requireForVolume('default')).resolves.toBeUndefined();
  });

  it('are applied with the next index; an apply without a description keeps the one there', async () => {
    const namespaces = (await open()).namespaces();
    expect(await namespaces.apply('analytics', 'Data team')).toEqual({
      Name: 'analytics',
      Description: 'Data team',
      CreateIndex: 2,
      ModifyIndex: 2,
    });
    expect(await namespaces.apply('analytics')).toEqual({
      Name: 'analytics',
      Description: 'Data team',
      CreateIndex: 2,
      ModifyIndex: 3,
    });
    await namespaces.apply('analysis');
    expect((await namespaces.withPrefix('anal')).map((n) => n.Name).sort()).toEqual(['analysis', 'analytics']);
    expect(await namespaces.withPrefix('x')).toEqual([]);
    await expect(namespaces.requireForVolume('analytics')).resolves.toBeUndefined();
  });

  it("refuse a name Nomad refuses, a volume in one that does not exist, and deleting default, in the servers' words", async () => {
    const namespaces = (await open()).namespaces();
    await expect(namespaces.apply('no/such')).rejects.toMatchObject({ code: 'NAMESPACE_INVALID' });
    await expect(namespaces.requireForVolume('analytics')).rejects.toThrow(
      'volume validation failed: no such namespace "analytics"',
    );
    await expect(namespaces.delete('default')).rejects.toThrow('can not delete default namespace');
    await expect(namespaces.delete('analytics')).rejects.toThrow('namespace not found');
    expect((await namespaces.list()).map((n) => n.Name)).toEqual(['default']);
  });

  it('are deleted when nothing runs in them, and stay deleted for the next command', async () => {
    const namespaces = (await open()).namespaces();
    await namespaces.apply('analytics');
    await namespaces.delete('analytics');
    await agent!.shutdown();
    agent = await Agent.open(await loadAgentConfig({ dataDir: join(dir, 'data'), env: {} }));
    expect((await agent.namespaces().list()).map((n) => n.Name)).toEqual(['default']);
  });
});
