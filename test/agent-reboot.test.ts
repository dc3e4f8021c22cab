import { copyFile, readFile, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loopDevicesBackedBelow, mountsBelow } from '@dhv/sdk/host';

const mountsUnder = async (dir: string) => (await mountsBelow(dir)).map((m) => m.mountPoint);
import { skipRootTests, REFERENCE_LOOPBACK, REFERENCE_MKDIR } from './support/kit.js';
import { tempAgent, volumeHcl, type TempAgent } from './support/dhv-agent.js';

let agent: TempAgent | undefined;
afterEach(async () => {
  await agent?.cleanup();
  agent = undefined;
});

describe.skipIf(skipRootTests('loopback volumes through the agent'))(
  'loopback volumes through the agent, with a simulated host reboot (root)',
  () => {
    it('creates a 47 MiB dhv-loopback volume, restores it after --reboot with its files, and deletes it leaving nothing', async () => {
      for (const file of [REFERENCE_LOOPBACK, REFERENCE_MKDIR]) {
        expect(existsSync(file), `${file} is not built; run npm run build`).toBe(true);
      }
      agent = await tempAgent();
      await copyFile(REFERENCE_LOOPBACK, join(agent.pluginDir, 'dhv-loopback'));
      await copyFile(REFERENCE_MKDIR, join(agent.pluginDir, 'dhv-mkdir'));
      const lo = await agent.dhv(
        'volume',
        'create',
        await agent.file(
          'lo.hcl',
          volumeHcl({ name: 'test', plugin_id: 'dhv-loopback', capacity_min: '47MiB', capacity_max: '47MiB' }),
        ),
      );
      expect(lo.exitCode, lo.stderr).toBe(0);
      const loId = /with ID ([0-9a-f-]{36})/.exec(lo.stdout)![1]!;
      expect((await agent.dhv('volume', 'status', loId)).stdout).toContain('Capacity  = 47 MiB');
      const mk = await agent.json(
        'volume',
        'create',
        await agent.file('mk.hcl', volumeHcl({ name: 'scratch', plugin_id: 'dhv-mkdir' })),
      );
      const loPath = join(agent.volumesDir, loId);
      expect(await mountsUnder(agent.volumesDir)).toEqual([loPath]);
      await writeFile(join(loPath, 'hello.txt'), 'loop');
      await writeFile(join(mk.Volume.HostPath, 'hello.txt'), 'dir');

      const restart = await agent.json('agent', 'restart', '--reboot');
      expect(restart.Reboot.Unmounted).toEqual([loPath]);
      expect(restart.Reboot.Detached).toHaveLength(1);
      expect(restart.Failed).toEqual([]);
      expect(restart.Restored.map((v: { Name: string }) => v.Name).sort()).toEqual(['scratch', 'test']);
      expect(await mountsUnder(agent.volumesDir)).toEqual([loPath]); // mounted again by restore
      expect(await readFile(join(loPath, 'hello.txt'), 'utf8')).toBe('loop');
      expect(await readFile(join(mk.Volume.HostPath, 'hello.txt'), 'utf8')).toBe('dir');
      expect(Object.keys((await agent.json('node', 'status')).HostVolumes).sort()).toEqual(['scratch', 'test']);

      expect((await agent.dhv('volume', 'delete', loId)).exitCode).toBe(0);
      expect((await agent.dhv('volume', 'delete', mk.Volume.ID)).exitCode).toBe(0);
      expect(await mountsUnder(agent.dir)).toEqual([]);
      expect(await loopDevicesBackedBelow(agent.dir)).toEqual([]);
    });
  },
);
