import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { type RequestInput } from '@dhv/sdk/client';
import { runAsDhv } from './support/run-as-dhv.js';
import { forceRemove } from '../packages/harness/src/conformance/scratch-dirs.js';
import { snapshotTree, treeChanges } from '../packages/harness/src/conformance/catalogue/volume-files.js';
import { builtPlugin, skipRootTests, tempDir } from './support/kit.js';

/**
 * The agent's cleanup delete (PROTOCOL.md, "The cleanup delete"): after an initial create
 * whose saving to client state failed, Nomad runs delete with DHV_CREATED_PATH set to the
 * volumes dir itself and an empty name and namespace. Each reference plugin must remove
 * that one volume and leave the volumes dir and every other volume exactly as they were.
 */
const PLUGINS = [
  {
    name: 'dhv-mkdir',
    root: false,
    capacity: 0n,
  },
  {
    name: 'dhv-loopback',
    root: true,
    capacity: 32n * 1024n * 1024n,
  },
] as const;

for (const plugin of PLUGINS) {
  describe.skipIf(plugin.root && skipRootTests(`${plugin.name}'s cleanup delete`))(
    `${plugin.name}: the agent's cleanup delete`,
    () => {
      let scratch: string;
      let volumesDir: string;
      let executable: string;
      const made: Array<RequestInput<'create'>> = [];

      beforeEach(async () => {
        executable = builtPlugin(plugin.name);
        scratch = await tempDir('cleanup-delete', plugin.root ? '/var/tmp' : tmpdir());
        volumesDir = join(scratch, 'volumes');
        made.length = 0;
      });

      afterEach(async () => {
        // Cleanup runs whatever the test did: ordinary deletes first, then whatever is left on the host.
        await Promise.allSettled(
          made.map((r) => runAsDhv(executable, 'delete', { ...r, createdPath: join(volumesDir, r.volumeId) })),
        );
        expect(await forceRemove(scratch)).toEqual([]);
      });

      const create = async () => {
        const volumeId = randomUUID();
        const request: RequestInput<'create'> = {
          volumesDir,
          volumeId,
          volumeName: `vol-${volumeId.slice(0, 8)}`,
          namespace: 'default',
          nodeId: 'node-1',
          capacityMinBytes: plugin.capacity,
          capacityMaxBytes: plugin.capacity,
        };
        made.push(request);
        const { path } = await runAsDhv(executable, 'create', request);
        await writeFile(join(path, 'data.txt'), `the data of ${volumeId}\n`);
        return { request, path };
      };

      test('removes only its own volume: the volumes dir and the other volume survive byte for byte', async () => {
        const doomed = await create();
        const kept = await create();
        const notDoomed = (rel: string) => !rel.includes(doomed.request.volumeId);
        const before = await snapshotTree(volumesDir, (rel) => !notDoomed(rel));
        expect(before.get(`${kept.request.volumeId}/data.txt`)).toMatch(/^file /);

        const { capacityMinBytes: _min, capacityMaxBytes: _max, ...rest } = doomed.request;
        await runAsDhv(executable, 'delete', { ...rest, volumeName: '', namespace: '', createdPath: volumesDir });

        expect(existsSync(doomed.path)).toBe(false);
        expect(treeChanges(before, await snapshotTree(volumesDir))).toEqual([]);
      });

      test('with the volumes dir written with a trailing slash, still removes only its own volume', async () => {
        const doomed = await create();
        const kept = await create();
        const before = await snapshotTree(volumesDir, (rel) => rel.includes(doomed.request.volumeId));
        const { capacityMinBytes: _min, capacityMaxBytes: _max, ...rest } = doomed.request;
        await runAsDhv(executable, 'delete', {
          ...rest,
          volumeName: '',
          namespace: '',
          createdPath: `${volumesDir}/`,
        });
        expect(existsSync(doomed.path)).toBe(false);
        expect(existsSync(join(kept.path, 'data.txt'))).toBe(true);
        expect(treeChanges(before, await snapshotTree(volumesDir))).toEqual([]);
      });

      test('of a volume that was never created, succeeds and changes nothing', async () => {
        await create();
        const before = await snapshotTree(volumesDir);
        await runAsDhv(executable, 'delete', {
          volumesDir,
          volumeId: randomUUID(),
          volumeName: '',
          namespace: '',
          nodeId: 'node-1',
          createdPath: volumesDir,
        });
        expect(treeChanges(before, await snapshotTree(volumesDir))).toEqual([]);
      });
    },
  );
}
