import { mkdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { volumeSpec } from '../__fixtures__/volume-spec.js';
import { agentConfigIn } from '../__fixtures__/agent-config.js';
import type { AgentConfig } from '../config/agent-config.js';
import { FakePluginRunner } from '../runner/fake-runner.js';
import { Agent } from './agent.js';
import { runPluginOnce } from './run-plugin-once.js';
import { removeTempDir, tempDir } from '../../../../test/support/kit.js';

/**
 * The servers' rules and the client's outcomes, in process: a FakePluginRunner answers for
 * the plugins `p` and `q`, the built-in mkdir runs for real in a scratch dir. What a plugin
 * process does at the boundary (argv, environment, exits) is tested in
 * test/agent-scenarios.test.ts and test/nomad-plugin-exec.test.ts.
 */
let dir: string;
let config: AgentConfig;
let runner: FakePluginRunner;
let agent: Agent;
let warnings: string[];

beforeEach(async () => {
  dir = await tempDir('agent-rules');
  config = agentConfigIn(dir);
  await mkdir(config.volumesDir, { recursive: true });
  runner = new FakePluginRunner(['p', 'q']);
  warnings = [];
  agent = await Agent.open(config, { runner, onWarning: (w) => warnings.push(w), restoreDeadlineMs: 5000 });
  await agent.start();
});
afterEach(async () => {
  await agent.shutdown();
  await removeTempDir(dir);
});

const failure = (err: unknown) => err as Error & { code?: string; details?: Record<string, unknown> };

describe('placement (the servers place a new volume on this node)', () => {
  it('places a volume whose plugin is fingerprinted and whose constraints hold, and runs its create once', async () => {
    const spec = volumeSpec({
      name: 'data',
      constraints: [{ attribute: '${attr.plugins.host_volume.p.version}', operator: '>=', value: '1.0.0' }],
    });
    const { volume, created } = await agent.createVolume(spec);
    expect(created).toBe(true);
    expect(volume).toMatchObject({ Name: 'data', PluginID: 'p', State: 'ready' });
    expect(runner.calls.map((c) => [c.operation, c.pluginId])).toEqual([['create', 'p']]);
  });

  it("refuses a constraint the node's attributes do not meet, before any plugin runs", async () => {
    const spec = volumeSpec({
      constraints: [{ attribute: '${attr.plugins.host_volume.p.version}', operator: '>', value: '2.0.0' }],
    });
    const err = failure(await agent.createVolume(spec).catch((e: unknown) => e));
    expect(err.code).toBe('PLACEMENT_FAILED');
    expect(err.message).toMatch(/^could not place volume "v": no node meets constraints/);
    expect(runner.calls).toEqual([]);
  });

  it("refuses another node ID or a node pool that does not exist, in the servers' words", async () => {
    const otherNode = failure(
      await agent.createVolume(volumeSpec({ nodeId: '11111111-2222-3333-4444-555555555555' })).catch((e: unknown) => e),
    );
    expect(otherNode.code).toBe('SPEC_INVALID');
    expect(otherNode.message).toMatch(/node "11111111-2222-3333-4444-555555555555" does not exist/);
    const otherPool = failure(await agent.createVolume(volumeSpec({ nodePool: 'gpu' })).catch((e: unknown) => e));
    expect(otherPool.message).toMatch(/node pool "gpu" does not exist/);
    expect(runner.calls).toEqual([]);
  });

  it('places a volume of a plugin added to the plugin dir only after the node fingerprints again', async () => {
    const spec = volumeSpec({ pluginId: 'late' });
    expect(failure(await agent.createVolume(spec).catch((e: unknown) => e)).code).toBe('PLACEMENT_FAILED');
    runner.plugins.add('late');
    await agent.fingerprint();
    await expect(agent.createVolume(spec)).resolves.toMatchObject({ created: true });
  });
});

describe('update rules (a spec with an id updates that volume)', () => {
  it('refuses an id that names no volume', async () => {
    const err = failure(
      await agent.createVolume(volumeSpec({ id: '99999999-0000-4000-8000-000000000000' })).catch((e: unknown) => e),
    );
    expect(err.code).toBe('VOLUME_NOT_FOUND');
    expect(err.message).toMatch(/^cannot update volume "99999999-0000-4000-8000-000000000000": volume does not exist/);
  });

  it('refuses a capacity_max below what was provisioned, and keeps the volume as it was', async () => {
    runner.onCreate = async (run) => ({ path: join(run.request.volumesDir, run.request.volumeId), bytes: 100n });
    const { volume } = await agent.createVolume(volumeSpec({ name: 'data' }));
    const err = failure(
      await agent
        .createVolume(volumeSpec({ name: 'data', id: volume.ID, capacityMaxBytes: 10n }))
        .catch((e: unknown) => e),
    );
    expect(err.code).toBe('VOLUME_UPDATE_REFUSED');
    expect(err.message).toContain('capacity_max (10) cannot be less than existing provisioned capacity (100)');
    expect(runner.calls).toHaveLength(1);
    expect((await agent.volume(volume.ID)).CapacityBytes).toBe(100n);
  });

  it('reports every field an update may not change at once, as go-multierror joins them', async () => {
    runner.onCreate = async (run) => ({ path: join(run.request.volumesDir, run.request.volumeId), bytes: 20n });
    const { volume } = await agent.createVolume(volumeSpec({ name: 'data' }));
    const moved = {
      name: 'data',
      id: volume.ID,
      capacityMaxBytes: 15n,
      nodeId: '00000000-0000-0000-0000-000000000000',
    };
    const both = failure(await agent.createVolume(volumeSpec(moved)).catch((e: unknown) => e));
    expect(both.message).toBe(
      `validating volume "${volume.ID}" update failed: 2 errors occurred:\n\t* node ID cannot be updated\n\t* capacity_max (15) cannot be less than existing provisioned capacity (20)\n\n`,
    );
    const shrink = failure(
      await agent
        .createVolume(volumeSpec({ name: 'data', id: volume.ID, capacityMaxBytes: 15n }))
        .catch((e: unknown) => e),
    );
    expect(shrink.message).toBe(
      `validating volume "${volume.ID}" update failed: 1 error occurred:\n\t* capacity_max (15) cannot be less than existing provisioned capacity (20)\n\n`,
    );
  });

  it('runs create again for an allowed update, keeps the create time, and says it was not created', async () => {
    const { volume } = await agent.createVolume(volumeSpec({ name: 'data' }));
    const updated = await agent.createVolume(volumeSpec({ name: 'data', id: volume.ID, capacityMinBytes: 5n }));
    expect(updated.created).toBe(false);
    expect(updated.volume.CreateTime).toBe(volume.CreateTime);
    expect(runner.calls.map((c) => c.operation)).toEqual(['create', 'create']);
  });
});

describe('name uniqueness (one volume per name on a node)', () => {
  it('passes over a node that already reports the name (the servers), and frees the name when the volume is deleted', async () => {
    const { volume } = await agent.createVolume(volumeSpec({ name: 'data' }));
    const err = failure(await agent.createVolume(volumeSpec({ name: 'data', pluginId: 'q' })).catch((e: unknown) => e));
    expect(err.code).toBe('PLACEMENT_FAILED');
    expect(err.message).toMatch(
      /^could not place volume "data": no node meets constraints: 1 nodes had existing volume/,
    );
    expect(runner.calls.map((c) => c.pluginId)).toEqual(['p']);
    await agent.deleteVolume(volume.ID);
    expect(await agent.client.locks()).toEqual({});
    await expect(agent.createVolume(volumeSpec({ name: 'data', pluginId: 'q' }))).resolves.toMatchObject({
      created: true,
    });
  });

  it("refuses another ID under a claimed name on the client's side too, before its plugin runs", async () => {
    const { volume } = await agent.createVolume(volumeSpec({ name: 'data' }));
    const err = failure(
      await agent.client
        .create({
          ID: '77777777-0000-4000-8000-000000000000',
          Name: 'data',
          PluginID: 'q',
          Namespace: 'default',
          NodeID: agent.nodeId,
          RequestedCapacityMinBytes: 0n,
          RequestedCapacityMaxBytes: 0n,
          Parameters: null,
        })
        .catch((e: unknown) => e),
    );
    expect(err.code).toBe('VOLUME_NAME_EXISTS');
    expect(runner.calls.map((c) => c.pluginId)).toEqual(['p']);
    expect(await agent.client.locks()).toEqual({ data: volume.ID });
  });

  it('releases the name of a create whose plugin failed, with the error the plugin run gave', async () => {
    runner.onCreate = async (run) => {
      throw FakePluginRunner.failure(run, 'no space left');
    };
    const err = failure(await agent.createVolume(volumeSpec({ name: 'data' })).catch((e: unknown) => e));
    expect(err.code).toBe('PLUGIN_FAILED');
    // Nomad's servers return the client's error behind the RPC's name.
    expect(err.message).toMatch(
      /^HostVolume\.Create error: error creating volume ".*" with plugin "p": exit status 1: no space left/,
    );
    expect(await agent.client.locks()).toEqual({});
    expect(await agent.volumes()).toEqual([]);
  });
});

describe('delete (what the servers send, and what they keep)', () => {
  it('runs the plugin a registered volume names, with its host_path as DHV_CREATED_PATH, and keeps the volume when that delete fails', async () => {
    const hostPath = join(dir, 'registered');
    await mkdir(hostPath);
    const { volume } = await agent.registerVolume(volumeSpec({ name: 'regp', pluginId: 'p', hostPath }));
    expect(volume.PluginID).toBe('p');
    runner.calls.length = 0;
    runner.onDelete = async (run) => {
      throw FakePluginRunner.failure(run, 'device busy');
    };
    const err = failure(await agent.deleteVolume(volume.ID).catch((e: unknown) => e));
    expect(err.message).toMatch(/^HostVolume\.Delete error: /);
    // The servers send the volume's namespace (a registered volume's client request has none): 07-register-update-force.json#3.
    expect(
      runner.calls.map((c) => {
        const request = c.request as { createdPath?: string; namespace?: string };
        return [c.operation, c.pluginId, request.createdPath, request.namespace];
      }),
    ).toEqual([['delete', 'p', hostPath, 'default']]);
    expect((await agent.volumes()).map((v) => v.ID)).toEqual([volume.ID]);
    runner.onDelete = async () => {};
    await agent.deleteVolume(volume.ID);
    expect(await agent.volumes()).toEqual([]);
  });

  it("reads and deletes by whole ID only, as Nomad's API: a prefix or a name names no volume there", async () => {
    const volume = (await agent.createVolume(volumeSpec({ name: 'a' }))).volume;
    for (const ref of [volume.ID.slice(0, 8), 'a']) {
      expect(failure(await agent.volume(ref).catch((e: unknown) => e)).code).toBe('VOLUME_NOT_FOUND');
      expect(failure(await agent.deleteVolume(ref).catch((e: unknown) => e)).message.split('\n')[0]).toBe(
        `no such volume: ${ref}`,
      );
    }
    expect((await agent.volume(volume.ID)).ID).toBe(volume.ID);
  });

  it('says no such volume for a whole ID that names none, without looking it up as a prefix', async () => {
    const err = failure(await agent.deleteVolume('00000000-0000-0000-0000-000000000000').catch((e: unknown) => e));
    expect(err.code).toBe('VOLUME_NOT_FOUND');
    expect(err.message.split('\n')[0]).toBe('no such volume: 00000000-0000-0000-0000-000000000000');
  });
});

describe('restore outcomes (what a restart brings back)', () => {
  it('restores every volume at once, each ready again, and runs each plugin create with the saved request', async () => {
    const a = (await agent.createVolume(volumeSpec({ name: 'a' }))).volume;
    const b = (await agent.createVolume(volumeSpec({ name: 'b', pluginId: 'q' }))).volume;
    runner.calls.length = 0;
    const report = await agent.restart();
    expect(report.restored.map((v) => v.ID).sort()).toEqual([a.ID, b.ID].sort());
    expect(report.failed).toEqual([]);
    expect(runner.calls.map((c) => [c.operation, c.request.volumeId]).sort()).toEqual(
      [
        ['create', a.ID],
        ['create', b.ID],
      ].sort(),
    );
    expect((await agent.volumes()).map((v) => v.State)).toEqual(['ready', 'ready']);
  });

  it('leaves out a volume whose restore fails (unavailable, its name kept), and restores the others', async () => {
    const kept = (await agent.createVolume(volumeSpec({ name: 'kept' }))).volume;
    const lost = (await agent.createVolume(volumeSpec({ name: 'lost', pluginId: 'q' }))).volume;
    runner.onCreate = async (run) => {
      if (run.pluginId === 'q') throw FakePluginRunner.failure(run, 'disk gone');
      return { path: join(run.request.volumesDir, run.request.volumeId), bytes: 0n };
    };
    const report = await agent.restart();
    expect(report.restored.map((v) => v.ID)).toEqual([kept.ID]);
    expect(report.failed).toMatchObject([{ volume: { ID: lost.ID }, error: { code: 'PLUGIN_FAILED' } }]);
    expect((await agent.volume(lost.ID)).State).toBe('unavailable');
    expect(await agent.client.locks()).toEqual({ kept: kept.ID, lost: lost.ID });
    expect(Object.keys((await agent.status()).node.HostVolumes)).toEqual(['kept']);
  });

  it('publishes no dynamic volume at all when a plugin is gone from the plugin dir, as a real agent, and says so', async () => {
    await agent.createVolume(volumeSpec({ name: 'a' }));
    await agent.createVolume(volumeSpec({ name: 'b', pluginId: 'q' }));
    runner.plugins.delete('q');
    const report = await agent.restart();
    expect(report.restoreError?.code).toBe('PLUGIN_NOT_FOUND');
    expect((await agent.status()).node.HostVolumes).toEqual({});
    expect(report.warnings.join('\n')).toMatch(/The plugin "q" of volume .* is missing from the plugin directory/);
  });

  it('runs the built-in mkdir in process beside a fake runner: its folder is made again at restore', async () => {
    const { volume } = await agent.createVolume(volumeSpec({ name: 'builtin', pluginId: 'mkdir' }));
    expect(runner.calls).toEqual([]);
    const path = join(config.volumesDir, volume.ID);
    expect((await stat(path)).isDirectory()).toBe(true);
    await rm(path, { recursive: true });
    const report = await agent.restart();
    expect(report.restored.map((v) => v.ID)).toEqual([volume.ID]);
    expect((await stat(path)).isDirectory()).toBe(true);
  });
});

describe('dhv plugin run through the runner', () => {
  const input = () => ({
    pluginDir: config.pluginDir,
    volumesDir: config.volumesDir,
    nodeId: agent.nodeId,
    nodePool: 'default',
    runner,
  });

  it("reports a failed run in the same shape as a good one, with the plugin's typed error", async () => {
    runner.onCreate = async (run) => {
      throw FakePluginRunner.failure(run, 'quota');
    };
    const result = await runPluginOnce({ ...input(), plugin: 'p', operation: 'create', name: 'x' });
    expect(result).toMatchObject({ ok: false, pluginId: 'p', operation: 'create', builtin: false, exitCode: 1 });
    expect(result.error?.code).toBe('PLUGIN_FAILED');
    expect(runner.calls).toMatchObject([{ operation: 'create', request: { volumeName: 'x' } }]);
  });

  it('runs the built-in mkdir in process, with the environment a plugin would get and its version decoded', async () => {
    const result = await runPluginOnce({ ...input(), plugin: 'mkdir', operation: 'fingerprint' });
    expect(result).toMatchObject({ ok: true, builtin: true, value: { version: '0.0.1', rawVersion: '0.0.1' } });
    expect(result.environment).toEqual({ DHV_OPERATION: 'fingerprint' });
    expect(runner.calls).toEqual([]);
  });
});
