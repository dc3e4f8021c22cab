import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent } from '../../agent/agent.js';
import { loadAgentConfig } from '../../config/agent-config.js';
import { readVolumeSpec } from '../../volume-specs/volume-spec.js';
import { findVolume } from './find-volume.js';
import { removeTempDir, tempDir } from '../../../../../test/support/kit.js';

/**
 * How the volume commands find the volume a user named, as Nomad's CLI does
 * (getHostVolumeByPrefix): two volumes of the built-in mkdir, made in process.
 */

let dir = '';
let agent: Agent;
const ids: Record<string, string> = {};
// Every test only reads: one agent and its two volumes serve them all.
beforeAll(async () => {
  dir = await tempDir('find-volume');
  agent = await Agent.open(await loadAgentConfig({ dataDir: join(dir, 'data'), env: {} }));
  for (const name of ['data', 'database']) {
    const file = join(dir, `${name}.hcl`);
    await writeFile(file, `type = "host"\nname = "${name}"\nplugin_id = "mkdir"\n`);
    ids[name] = (await agent.createVolume(await readVolumeSpec(file, 'create'))).volume.ID;
  }
});
afterAll(async () => {
  await agent.shutdown();
  await removeTempDir(dir);
});

describe('the volume a command names', () => {
  it('is the one whose name or ID starts with what was typed, or among several the one whose name is exactly it', async () => {
    expect((await findVolume(agent, 'data', 'default', { command: 'status' })).ID).toBe(ids.data);
    expect((await findVolume(agent, 'datab', 'default', { command: 'status' })).Name).toBe('database');
    expect((await findVolume(agent, ids.database!.slice(0, 8), 'default', { command: 'delete' })).Name).toBe(
      'database',
    );
  });

  it("is refused with Nomad's table of the matches when a prefix names several", async () => {
    const err = await findVolume(agent, 'dat', 'default', { command: 'status' }).then(
      () => {
        throw new Error('a prefix of two volumes was taken as one');
      },
      (e: Error & { code: string }) => e,
    );
    expect(err).toMatchObject({ code: 'VOLUME_ID_AMBIGUOUS' });
    expect(err.message.startsWith('Prefix matched multiple host volumes\n\n')).toBe(true);
    expect(err.message.endsWith('\n\nGive more of the ID, or the whole name.')).toBe(true);
    for (const name of ['data', 'database']) expect(err.message).toContain(ids[name]!.slice(0, 8));
    await expect(findVolume(agent, 'dat', 'default', { command: 'delete' })).rejects.toThrow(
      /^Prefix matched multiple volumes\n\n/,
    );
  });

  it("is not found in Nomad's words for each command, with where to look", async () => {
    await expect(findVolume(agent, 'nope', 'default', { command: 'delete' })).rejects.toMatchObject({
      code: 'VOLUME_NOT_FOUND',
      message:
        'Could not find existing host volume to delete: no volumes with prefix or ID "nope" found\n' +
        `Run dhv volume status to list the volumes of namespace "default" (-namespace '*' lists every namespace).`,
    });
    await expect(findVolume(agent, 'data', 'analytics', { command: 'status' })).rejects.toThrow(
      /^Error listing host volumes: no volumes with prefix or ID "data" found\n.*namespace "analytics"/,
    );
    await expect(findVolume(agent, 'x', 'default', { command: 'create' })).rejects.toThrow(
      /^Could not update existing volume: no volumes with prefix or ID "x" found\n/,
    );
  });

  it("quotes what was typed as Go's %q does", async () => {
    await expect(findVolume(agent, 'a\x7f\u00a0', 'default', { command: 'register' })).rejects.toThrow(
      /^Could not update existing volume: no volumes with prefix or ID "a\\x7f\\u00a0" found\n/,
    );
  });
});
