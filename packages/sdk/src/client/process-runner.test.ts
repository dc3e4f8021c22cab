import { describe, expect, it } from 'vitest';
import { execPlugin } from './exec-plugin.js';
import { PluginError } from './errors.js';
import { ProcessRunner } from './process-runner.js';
import { valueWithRun } from './run-result.js';
import { usePluginDirs, type PluginDir } from '../__fixtures__/plugins.js';

const request = { volumesDir: '/srv/volumes', volumeName: 'data', volumeId: 'v-1', nodeId: 'node-1' };

let dir: PluginDir;
usePluginDirs((d) => {
  dir = d;
});

describe('ProcessRunner, the one plugin call', () => {
  it('returns a failed run as a result with its PluginError, the run reported as for a good one', async () => {
    const p = await dir.bash('fails', `echo oops >&2; echo '{"error": "no room"}'; exit 3`);
    const result = await new ProcessRunner().run('create', { plugin: p, request });
    expect(result).toMatchObject({ ok: false, exitCode: 3, stderr: 'oops\n', operation: 'create', builtin: false });
    expect(result.error).toBeInstanceOf(PluginError);
    expect(result.error?.nomadMessage).toBe('error creating volume "v-1" with plugin "fails": exit status 3: no room');
    expect(result.environment.DHV_VOLUME_ID).toBe('v-1');
  });

  it('gives a plugin not found as a result too, nothing run', async () => {
    const result = await new ProcessRunner().run('fingerprint', {
      plugin: { pluginDir: dir.path, pluginId: 'absent' },
      request: {},
    });
    expect(result).toMatchObject({ ok: false, exitCode: null, environment: {} });
    expect(result.error?.code).toBe('PLUGIN_NOT_FOUND');
  });

  it('tells onProcessGroup of each plugin process group while it runs, raw runs included', async () => {
    const told: Array<[number, boolean]> = [];
    const runner = new ProcessRunner({ onProcessGroup: (pgid, exited) => told.push([pgid, exited]) });
    const p = await dir.bash('fp', `echo '{"version": "1"}'`);
    await runner.run('fingerprint', { plugin: p, request: {} });
    await runner.runRaw(p, ['nonsense'], {}, { timeoutMs: 10_000 });
    expect(told.map(([, exited]) => exited)).toEqual([false, true, false, true]);
    expect(told[0]![0]).toBe(told[1]![0]);
    expect(told[2]![0]).toBe(told[3]![0]);
    expect(told[0]![0]).toBeGreaterThan(1);
  });

  it('is what execPlugin runs: the same fields, truncated meaning stdout or stderr in both', async () => {
    const p = await dir.bash(
      'noisy',
      `/usr/bin/head -c 5000 /dev/zero >&2; echo '{"path": "/srv/volumes/v-1", "bytes": 7}'`,
    );
    const viaRunner = await new ProcessRunner().run('create', { plugin: p, request, maxOutputBytes: 1000 });
    const viaExec = await execPlugin(p, 'create', request, { maxOutputBytes: 1000 });
    const { durationMs: _a, ...fromRunner } = valueWithRun(viaRunner);
    const { durationMs: _b, ...fromExec } = viaExec;
    expect(fromExec).toEqual(fromRunner);
    expect(fromExec).toMatchObject({ path: '/srv/volumes/v-1', bytes: 7n, truncated: true });
    expect(Object.keys(viaExec)).not.toContain('ok');
  });
});
