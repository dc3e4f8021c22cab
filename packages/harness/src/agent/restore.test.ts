import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AgentConfig } from '../config/agent-config.js';
import type { VolumeRecord } from './client-state.js';
import { mapWithConcurrency } from './pool.js';
import { restoreVolumes } from './restore.js';

let dir: string;
let config: AgentConfig;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'dhv-restore-'));
  config = { dataDir: dir, pluginDir: join(dir, 'plugins'), volumesDir: join(dir, 'volumes'), nodePool: 'default', hostVolumes: [] };
  await mkdir(config.pluginDir);
  await mkdir(config.volumesDir);
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const record = (pluginId: string): VolumeRecord => {
  const id = randomUUID();
  return {
    ID: id,
    HostPath: join(config.volumesDir, id),
    CreateReq: {
      ID: id,
      Name: `vol-${id.slice(0, 8)}`,
      PluginID: pluginId,
      Namespace: 'default',
      NodeID: 'ae118273-5416-3ed7-01dd-10fe8bf49e81',
      RequestedCapacityMinBytes: 0n,
      RequestedCapacityMaxBytes: 0n,
      Parameters: null,
    },
    Volume: { NodePool: 'default', CapacityBytes: 0n, RequestedCapabilities: [], Constraints: [], CreateTime: '', ModifyTime: '' },
  };
};

describe('restore', () => {
  it('never runs more than the limit at once', async () => {
    let running = 0;
    let most = 0;
    await mapWithConcurrency([...Array(40).keys()], 3, async () => {
      most = Math.max(most, ++running);
      await new Promise((r) => setImmediate(r));
      running--;
    });
    expect(most).toBe(3);
  });

  it('bounds how many plugin processes run at once', async () => {
    const running = join(dir, 'running');
    await mkdir(running);
    // Counts the creates in flight (its own marker included) and records the count.
    await writeFile(
      join(config.pluginDir, 'counting'),
      `#!/bin/bash\n/bin/touch "${running}/$DHV_VOLUME_ID"\nfiles=( "${running}"/* )\necho \${#files[@]} >> "${dir}/counts"\n/bin/sleep 0.2\n/bin/rm "${running}/$DHV_VOLUME_ID"\n/bin/mkdir -p "$DHV_VOLUMES_DIR/$DHV_VOLUME_ID"\necho "{\\"path\\": \\"$DHV_VOLUMES_DIR/$DHV_VOLUME_ID\\"}"\n`,
    );
    await chmod(join(config.pluginDir, 'counting'), 0o755);
    const records = Array.from({ length: 8 }, () => record('counting'));
    const report = await restoreVolumes(records, config, { concurrency: 2, signal: new AbortController().signal });
    expect(report.failed).toEqual([]);
    expect(report.restored).toHaveLength(8);
    const counts = (await readFile(join(dir, 'counts'), 'utf8')).trim().split('\n').map(Number);
    expect(Math.max(...counts)).toBeLessThanOrEqual(2);
  });

  it('restores built-in and registered volumes, leaves out the ones that fail, and says what a real agent would do about a missing plugin', async () => {
    const builtin = Array.from({ length: 300 }, () => record('mkdir'));
    const registered = { ...record(''), HostPath: join(dir, 'gone') };
    const orphan = record('vanished-plugin');
    const report = await restoreVolumes([...builtin, registered, orphan], config, { signal: new AbortController().signal });
    expect(report.restored).toHaveLength(300);
    expect(report.failed.map((f) => [f.record.ID, f.error.code]).sort()).toEqual(
      [[registered.ID, 'HOST_PATH_MISSING'], [orphan.ID, 'PLUGIN_NOT_FOUND']].sort(),
    );
    expect(report.warnings).toEqual([expect.stringMatching(/plugin "vanished-plugin" is missing .*a real Nomad agent would fail the whole restore and report none of its 302 volumes.*kept the other 300/)]);
  });
});
