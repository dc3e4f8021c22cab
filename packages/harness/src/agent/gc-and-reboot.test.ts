import { mkdir, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { volumeSpec } from '../__fixtures__/volume-spec.js';
import { agentConfigIn } from '../__fixtures__/agent-config.js';
import type { AgentConfig } from '../config/agent-config.js';
import { FakePluginRunner } from '../runner/fake-runner.js';
import { Agent } from './agent.js';
import { AgentStore } from './state/store.js';
import { removeTempDir, tempDir } from '../../../../test/support/kit.js';

/**
 * gc and reboot as operations of the Agent, in process: they use the agent's store and the
 * runner it was given, so a FakePluginRunner answers for plugin `p` and no process runs.
 */
const ORPHAN_ID = '3c9d2b1a-0000-4000-8000-00000000000a';

let dir: string;
let config: AgentConfig;
let runner: FakePluginRunner;
let agent: Agent;

beforeEach(async () => {
  dir = await tempDir('agent-gc-reboot');
  config = agentConfigIn(dir);
  await mkdir(config.volumesDir, { recursive: true });
  runner = new FakePluginRunner(['p']);
  agent = await Agent.open(config, { runner, restoreDeadlineMs: 5000 });
  await agent.start();
});
afterEach(async () => {
  await agent.shutdown();
  await removeTempDir(dir);
});

describe('gc (agent.orphans())', () => {
  it("finds the files a create cut short left in its plugin's hidden folder, and removes them with that plugin's delete", async () => {
    // What a create of plugin p killed before client state was written leaves: its name claim and p's file.
    await new AgentStore(config.dataDir).claims.claim('cut-short', ORPHAN_ID);
    const image = join(config.volumesDir, '.p', `${ORPHAN_ID}.img`);
    await mkdir(join(config.volumesDir, '.p'));
    await writeFile(image, '');
    runner.onDelete = async (run) => rm(join(run.request.volumesDir, '.p', `${run.request.volumeId}.img`));

    expect(await agent.orphans().find()).toMatchObject([
      { id: ORPHAN_ID, name: 'cut-short', kind: 'plugin files', plugin: 'p', paths: [image], blocker: undefined },
    ]);
    const listed = await agent.orphans().collect();
    expect(listed).toMatchObject({ orphans: [{ id: ORPHAN_ID }], removed: [], failed: [] });
    expect(runner.calls.filter((c) => c.operation === 'delete')).toEqual([]);

    expect(await agent.orphans().collect({ remove: true })).toMatchObject({ removed: [ORPHAN_ID], failed: [] });
    expect(runner.calls.filter((c) => c.operation === 'delete')).toMatchObject([
      {
        pluginId: 'p',
        request: { volumeId: ORPHAN_ID, volumeName: 'cut-short', createdPath: '', nodeId: agent.nodeId },
      },
    ]);
    expect(existsSync(image)).toBe(false);
    expect(await agent.orphans().find()).toEqual([]);
    // Its claim went with it: the name is free for a create again.
    expect(await agent.client.locks()).toEqual({});
  });

  it("reports a plugin's failed delete as the orphan's failure and keeps it", async () => {
    await new AgentStore(config.dataDir).claims.claim('cut-short', ORPHAN_ID);
    await mkdir(join(config.volumesDir, '.p'));
    await writeFile(join(config.volumesDir, '.p', `${ORPHAN_ID}.img`), '');
    runner.onDelete = async (run) => {
      throw FakePluginRunner.failure(run, 'device busy');
    };

    const report = await agent.orphans().collect({ remove: true });
    expect(report.removed).toEqual([]);
    expect(report.failed).toMatchObject([{ id: ORPHAN_ID, error: { code: 'ORPHAN_NOT_REMOVED' } }]);
    expect(report.failed[0]!.error.message).toContain(`orphan ${ORPHAN_ID} was not removed:`);
    expect(report.failed[0]!.error.message).toContain('device busy');
    expect(await agent.orphans().find()).toMatchObject([{ id: ORPHAN_ID }]);
  });
});

describe('gc without opening the agent (Agent.orphansOf, dhv agent gc)', () => {
  it("takes the same path as agent.orphans(): the runner it is given runs the orphan's delete", async () => {
    await new AgentStore(config.dataDir).claims.claim('cut-short', ORPHAN_ID);
    await mkdir(join(config.volumesDir, '.p'));
    await writeFile(join(config.volumesDir, '.p', `${ORPHAN_ID}.img`), '');
    runner.onDelete = async (run) => rm(join(run.request.volumesDir, '.p', `${run.request.volumeId}.img`));

    const report = await Agent.orphansOf(config, { runner }).collect({ remove: true });
    expect(report).toMatchObject({ removed: [ORPHAN_ID], failed: [] });
    expect(runner.calls.filter((c) => c.operation === 'delete')).toMatchObject([
      { pluginId: 'p', request: { volumeId: ORPHAN_ID, nodeId: agent.nodeId } },
    ]);
  });

  it('makes no data dir where there is none, and lists what it finds', async () => {
    const elsewhere = { ...config, dataDir: join(dir, 'no-data-dir') };
    await mkdir(join(config.volumesDir, ORPHAN_ID));
    const report = await Agent.orphansOf(elsewhere, { runner }).collect();
    expect(report.orphans).toMatchObject([{ id: ORPHAN_ID, kind: 'directory' }]);
    expect(existsSync(elsewhere.dataDir)).toBe(false);
  });
});

describe('reboot (agent.restart({ reboot: true }))', () => {
  it("takes the volumes down in the agent's store and restores each with the agent's runner", async () => {
    const { volume } = await agent.createVolume(volumeSpec({ name: 'data', pluginId: 'p' }));
    const creates = () => runner.calls.filter((c) => c.operation === 'create').length;
    expect(creates()).toBe(1);

    const report = await agent.restart({ reboot: true });
    expect(report.reboot).toEqual({ unmounted: [], detached: [], skipped: [], leftMounted: [] });
    expect(creates()).toBe(2);
    expect(report.restored.map((v) => v.ID)).toEqual([volume.ID]);
    expect(report.failed).toEqual([]);
    expect((await agent.volume(volume.ID)).State).toBe('ready');
  });
});
