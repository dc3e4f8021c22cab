import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { agentConfigIn } from '../__fixtures__/agent-config.js';
import type { AgentConfig } from '../config/agent-config.js';
import { validateVolumeSpec } from '../volume-specs/volume-spec.js';
import { Agent } from './agent.js';
import { signalProcess } from '@dhv/sdk/host';
import { pidWrittenTo, processAlive as alive } from '../../../../test/support/processes.js';
import { removeTempDir, tempDir } from '../../../../test/support/kit.js';

let dir: string;
let config: AgentConfig;
let agents: Agent[] = [];
beforeEach(async () => {
  dir = await tempDir('agent');
  config = agentConfigIn(dir);
  await mkdir(config.pluginDir);
  // create blocks until the marker file disappears, recording its PID first.
  await writeFile(
    join(config.pluginDir, 'slow'),
    `#!/bin/bash\ncase "$1" in\n  fingerprint) echo '{"version": "1"}' ;;\n  create) echo $$ > "${dir}/slow.pid"; while [ -e "${dir}/block" ]; do /bin/sleep 0.05; done; /bin/mkdir -p "$DHV_VOLUMES_DIR/$DHV_VOLUME_ID"; echo "{\\"path\\": \\"$DHV_VOLUMES_DIR/$DHV_VOLUME_ID\\"}" ;;\n  delete) /bin/rm -rf "$DHV_VOLUMES_DIR/$DHV_VOLUME_ID" ;;\nesac\n`,
  );
  await chmod(join(config.pluginDir, 'slow'), 0o755);
});
afterEach(async () => {
  for (const agent of agents) await agent.shutdown();
  agents = [];
  const pid = Number(await readFile(join(dir, 'slow.pid'), 'utf8').catch(() => ''));
  if (pid > 1) signalProcess(pid, 'SIGKILL');
  await removeTempDir(dir);
});

async function open(): Promise<Agent> {
  const agent = await Agent.open(config);
  agents.push(agent);
  return agent;
}

const spec = (name: string) => validateVolumeSpec({ type: 'host', name, plugin_id: 'slow' }, 'create');

describe('agent shutdown', () => {
  it('aborts a plugin run in flight (its process is killed) and a restart then restores cleanly', async () => {
    const agent = await open();
    await agent.start();
    await writeFile(join(dir, 'block'), '');
    const creating = agent.createVolume(spec('blocked'));
    creating.catch(() => {});
    const pid = await pidWrittenTo(join(dir, 'slow.pid'));
    await agent.shutdown();
    await expect(creating).rejects.toMatchObject({ code: 'PLUGIN_ABORTED' });
    expect(alive(pid)).toBe(false);
    await expect(agent.volumes()).resolves.toEqual([]); // nothing half-recorded
    await expect(agent.createVolume(spec('after'))).rejects.toMatchObject({ code: 'AGENT_SHUT_DOWN' });

    await rm(join(dir, 'block'));
    const report = await agent.start();
    expect(report.failed).toEqual([]);
    const { volume } = await agent.createVolume(spec('after'));
    expect(volume.State).toBe('ready');
  });

  it('aborts a restore in flight, and the next start restores every volume', async () => {
    const agent = await open();
    await agent.start();
    const { volume } = await agent.createVolume(spec('restored'));
    await writeFile(join(dir, 'block'), '');
    await rm(join(dir, 'slow.pid'));
    const restarting = agent.restart();
    restarting.catch(() => {});
    await pidWrittenTo(join(dir, 'slow.pid'));
    await agent.shutdown();
    await expect(restarting).rejects.toMatchObject({ code: 'AGENT_SHUT_DOWN' });

    await rm(join(dir, 'block'));
    const report = await agent.start();
    expect(report.restored.map((v) => v.ID)).toEqual([volume.ID]);
    expect((await agent.status()).node.HostVolumes.restored?.ID).toBe(volume.ID);
  });
});
