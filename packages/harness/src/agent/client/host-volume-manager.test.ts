import { mkdir } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { volumeSpec } from '../../__fixtures__/volume-spec.js';
import { agentConfigIn } from '../../__fixtures__/agent-config.js';
import type { AgentConfig } from '../../config/agent-config.js';
import { Agent } from '../agent.js';
import type { ClientCreateRequest, ClientState } from '../state/client-state.js';
import { FakePluginRunner } from '../../runner/fake-runner.js';
import type { ClientStateStore } from './volume-manager-context.js';
import { removeTempDir, tempDir } from '../../../../../test/support/kit.js';

/**
 * The agent's rules, in process: a fake plugin runner stands in for plugin processes
 * (the real runner is proven end to end by test/agent-scenarios.test.ts).
 */
let dir: string;
let config: AgentConfig;
let runner: FakePluginRunner;
let failNext: Set<string>;
let warnings: string[];
let agent: Agent;

const failing = (state: ClientState): ClientStateStore => ({
  put: async (r) => {
    if (failNext.delete('put')) throw new Error('disk full');
    return state.put(r);
  },
  remove: (id) => state.remove(id),
  list: () => state.list(),
  scan: () => state.scan(),
  get: (id) => state.get(id),
});

beforeEach(async () => {
  dir = await tempDir('manager');
  config = agentConfigIn(dir);
  // Nomad never creates the volumes dir: on a real node it is there before the agent starts.
  await mkdir(config.volumesDir, { recursive: true });
  runner = new FakePluginRunner(['p', 'q']);
  failNext = new Set();
  warnings = [];
  agent = await Agent.open(config, {
    runner,
    clientState: failing,
    onWarning: (w) => warnings.push(w),
    restoreDeadlineMs: 5000,
  });
  await agent.start();
});
afterEach(async () => {
  await agent.shutdown();
  await removeTempDir(dir);
});

const NODE = '0b62d807-6101-a80f-374d-e1c430abbf47';
let n = 0;
function req(name: string, pluginId = 'p', id?: string): ClientCreateRequest {
  n++;
  return {
    ID: id ?? `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
    Name: name,
    PluginID: pluginId,
    Namespace: 'default',
    NodeID: NODE,
    RequestedCapacityMinBytes: 0n,
    RequestedCapacityMaxBytes: 0n,
    Parameters: { k: 'v' },
  };
}

describe('the host volume manager', () => {
  it('runs the cleanup delete after a failed state write on an initial create, with the volumes dir as the created path and no name', async () => {
    failNext.add('put');
    const r = req('data');
    await expect(agent.client.create(r)).rejects.toThrow(/^disk full$/);
    expect(runner.calls.map((c) => c.operation)).toEqual(['create', 'delete']);
    expect(runner.calls[1]!.request).toMatchObject({
      createdPath: config.volumesDir,
      volumeName: '',
      namespace: '',
      volumeId: r.ID,
      nodeId: NODE,
      parameters: { k: 'v' },
    });
    expect(await agent.client.locks()).toEqual({});
  });

  it('joins the state error and the failed cleanup delete as go-multierror does', async () => {
    failNext.add('put');
    runner.onDelete = async () => {
      throw new Error('device busy');
    };
    await expect(agent.client.create(req('data'))).rejects.toThrow(
      '2 errors occurred:\n\t* disk full\n\t* device busy\n\n',
    );
  });

  it('runs no delete when the state write of an update fails, and keeps the name', async () => {
    const r = req('data');
    await agent.client.create(r);
    failNext.add('put');
    await expect(agent.client.create({ ...r, RequestedCapacityMinBytes: 10n })).rejects.toThrow('disk full');
    expect(runner.calls.map((c) => c.operation)).toEqual(['create', 'create']);
    expect(await agent.client.locks()).toEqual({ data: r.ID });
  });

  it("refuses another ID under a claimed name with Nomad's words first, before any plugin runs", async () => {
    await agent.client.create(req('data'));
    const err = await agent.client.create(req('data')).catch((e: Error & { code?: string }) => e);
    expect(err).toMatchObject({ code: 'VOLUME_NAME_EXISTS' });
    expect((err as Error).message.split('\n')[0]).toBe('volume name already exists on this node');
    expect(runner.calls).toHaveLength(1);
  });

  it('releases the name when an update fails, as Nomad does, and warns that a live volume lost its name', async () => {
    const r = req('data');
    await agent.client.create(r);
    runner.onCreate = async () => {
      throw new Error('no space');
    };
    await expect(agent.client.create(r)).rejects.toThrow('no space');
    expect(await agent.client.locks()).toEqual({});
    expect(warnings).toEqual([
      expect.stringMatching(
        /released the name "data" .* still on the node and in client state: a real Nomad agent does the same/,
      ),
    ]);
    expect((await agent.status()).node.HostVolumes.data?.ID).toBe(r.ID);
  });

  it("runs the plugin's delete for a volume the node never had, and succeeds", async () => {
    const r = req('ghost');
    await expect(agent.client.delete({ ...r, HostPath: '/somewhere' })).resolves.toEqual({
      volumeName: 'ghost',
      volumeId: r.ID,
    });
    expect(runner.calls).toMatchObject([
      { operation: 'delete', request: { createdPath: '/somewhere', volumeName: 'ghost' } },
    ]);
  });
});

describe('restore', () => {
  it('runs every volume at once under one deadline counted from its start', async () => {
    const records = Array.from({ length: 12 }, (_, i) => req(`v${i}`));
    for (const r of records) await agent.client.create(r);
    runner.calls.length = 0;
    let inFlight = 0;
    let most = 0;
    let release!: () => void;
    const all = new Promise<void>((r) => (release = r));
    runner.onCreate = async (call) => {
      most = Math.max(most, ++inFlight);
      if (inFlight === records.length) release();
      await all;
      inFlight--;
      return { path: `${call.request.volumesDir}/${call.request.volumeId}`, bytes: 0n };
    };
    const report = await agent.restart();
    expect(report.failed).toEqual([]);
    expect(most).toBe(records.length);
    for (const c of runner.calls) expect(c.timeoutMs).toBeLessThanOrEqual(5000);
  });

  it("publishes no dynamic volume when a plugin is missing, yet runs the other creates and keeps their names; the missing plugin's name is free", async () => {
    const a = req('alpha', 'p');
    const b = req('beta', 'q');
    await agent.client.create(a);
    await agent.client.create(b);
    runner.plugins.delete('q');
    runner.calls.length = 0;
    const report = await agent.restart();
    expect(report.restoreError?.message).toMatch(/"q"/);
    expect(runner.calls.map((c) => c.request.volumeId)).toEqual([a.ID]);
    expect((await agent.status()).node.HostVolumes).toEqual({});
    expect(await agent.client.locks()).toEqual({ alpha: a.ID });
    expect(report.warnings.join('\n')).toMatch(/The plugin "q" of volume .* is missing[\s\S]*Put the plugin back/);
  });

  it('publishes the path the restore returned while client state keeps the first one', async () => {
    const r = req('data');
    await agent.client.create(r);
    runner.onCreate = async (call) => ({ path: `${call.request.volumesDir}/${call.request.volumeId}.v2`, bytes: 0n });
    const report = await agent.restart();
    expect((await agent.status()).node.HostVolumes.data?.Path).toBe(`${config.volumesDir}/${r.ID}.v2`);
    expect((await agent.volume(r.ID)).HostPath).toBe(`${config.volumesDir}/${r.ID}`);
    expect(report.warnings).toEqual([expect.stringMatching(/came back at .*\.v2, not at its saved path/)]);
  });

  it('keeps the name of a volume whose restore failed, and leaves the volume out', async () => {
    const r = req('data');
    await agent.client.create(r);
    runner.onCreate = async () => {
      throw new Error('exit status 1');
    };
    await agent.restart();
    expect((await agent.status()).node.HostVolumes).toEqual({});
    expect(await agent.client.locks()).toEqual({ data: r.ID });
  });
});

describe('volume states as the servers compute them', () => {
  it('is ready once the node reports the name, and unavailable when a restart no longer reports it while others are reported', async () => {
    const spec = (name: string, pluginId = 'p') => volumeSpec({ name, pluginId });
    const { volume: kept } = await agent.createVolume(spec('kept'));
    const { volume: lost } = await agent.createVolume(spec('lost', 'q'));
    expect([kept.State, lost.State]).toEqual(['ready', 'ready']);
    runner.onCreate = async (call) => {
      if (call.pluginId === 'q') throw new Error('exit status 1');
      return { path: `${call.request.volumesDir}/${call.request.volumeId}`, bytes: 0n };
    };
    await agent.restart();
    expect((await agent.volume(kept.ID)).State).toBe('ready');
    expect((await agent.volume(lost.ID)).State).toBe('unavailable');
  });

  it('refuses to place a volume whose plugin the node has not fingerprinted, and says dhv agent fingerprint is the reload', async () => {
    const spec = volumeSpec({ name: 'x', pluginId: 'new' });
    const err = (await agent.createVolume(spec).catch((e: Error) => e)) as Error;
    expect(err.message).toMatch(
      /^could not place volume "x": no node meets constraints: 0 nodes had existing volume, 0 nodes filtered by node pool governance, 1 nodes were infeasible\n/,
    );
    expect(err.message).toMatch(/run dhv agent fingerprint/);
    expect(runner.calls).toEqual([]);
    runner.plugins.add('new');
    await agent.fingerprint();
    await expect(agent.createVolume(spec)).resolves.toMatchObject({ created: true });
  });
});
