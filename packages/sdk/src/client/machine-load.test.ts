import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PluginDir } from '../__fixtures__/plugins.js';

const load = vi.hoisted(() => ({ lastMinute: 0 }));
vi.mock('node:os', async (importOriginal) => ({
  ...(await importOriginal<typeof import('node:os')>()),
  loadavg: () => [load.lastMinute, 0, 0],
  availableParallelism: () => 2,
}));

const { loadedMachineHint } = await import('./machine-load.js');
const { execPlugin } = await import('./exec-plugin.js');
const { PluginError } = await import('./errors.js');

let dir: PluginDir;
beforeEach(async () => {
  dir = await PluginDir.create();
});
afterEach(async () => {
  await dir.cleanup();
});

describe('a missed deadline on a loaded machine', () => {
  it('says nothing while the load average is at most the CPU count', () => {
    load.lastMinute = 2;
    expect(loadedMachineHint()).toEqual([]);
  });

  it('names the load and the CPU count above it', () => {
    load.lastMinute = 7.25;
    expect(loadedMachineHint()).toEqual([expect.stringContaining('load average 7.3 on 2 CPUs')]);
  });

  it('is among the hints of a plugin that timed out, and only then', async () => {
    load.lastMinute = 9;
    await dir.bash('slow', 'exec /bin/sleep 10');
    const timedOut = await execPlugin(
      { pluginDir: dir.path, pluginId: 'slow' },
      'fingerprint',
      {},
      { timeoutMs: 200 },
    ).catch((e: unknown) => e);
    expect(timedOut).toBeInstanceOf(PluginError);
    expect((timedOut as InstanceType<typeof PluginError>).hints).toContainEqual(
      expect.stringContaining('this machine is loaded (load average 9.0 on 2 CPUs)'),
    );

    await dir.bash('broken', 'echo "{}"; exit 3');
    const failed = await execPlugin({ pluginDir: dir.path, pluginId: 'broken' }, 'fingerprint', {}).catch(
      (e: unknown) => e,
    );
    expect((failed as InstanceType<typeof PluginError>).hints.join('\n')).not.toContain('this machine is loaded');
  });
});
