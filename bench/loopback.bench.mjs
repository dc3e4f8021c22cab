// dhv-loopback create and delete, whole process under the agent's environment, against
// what Nomad's example loopback plugin does (`dd if=/dev/zero` the whole image, then
// mkfs), measured in the same run. Needs root and loop devices; cleans up after itself.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const PLUGIN = join(here, '../packages/plugin-loopback/dist/dhv-loopback');
const GIB = 1024 ** 3;

export default async function run(lib) {
  if (process.getuid?.() !== 0) throw new Error('the loopback benchmark needs root (loop devices and mount)');
  if (!existsSync(PLUGIN)) throw new Error(`${PLUGIN} is missing; run npm run build first`);
  const volumesDir = await lib.makeScratch('loopback', '/var/tmp');
  try {
    const request = (volumeId, gib) => ({
      volumesDir,
      volumeId,
      volumeName: `bench-${volumeId.slice(0, 8)}`,
      nodeId: 'bench-node',
      capacityMinBytes: gib * GIB,
    });
    const once = (operation, req) =>
      lib.timeProcess(PLUGIN, [operation], { env: lib.agentEnv(operation, req, PLUGIN), runs: 1, warmup: 0 });

    /** Creates and deletes a fresh volume `runs` times, timing each process. */
    async function cycle(gib, runs, parameters) {
      const create = [];
      const del = [];
      for (let i = 0; i < runs + 1; i++) {
        const id = randomUUID();
        const c = await once('create', { ...request(id, gib), parameters });
        const d = await once('delete', { ...request(id, gib), createdPath: join(volumesDir, id) });
        if (i > 0) {
          // the first cycle warms the page cache and node's code cache
          create.push(...c);
          del.push(...d);
        }
      }
      return { create, del };
    }

    /** Nomad's example plugin: write the whole image with zeros, then make the filesystem. */
    async function ddThenMkfs(gib, runs) {
      const samples = [];
      const image = join(volumesDir, 'dd.img');
      for (let i = 0; i < runs; i++) {
        samples.push(
          ...(await lib.timeProcess(
            '/bin/sh',
            [
              '-c',
              `dd if=/dev/zero of=${image} bs=1M count=${gib * 1024} status=none && /usr/sbin/mkfs.ext4 -q -F ${image}`,
            ],
            { runs: 1, warmup: 0 },
          )),
        );
        await rm(image, { force: true });
        execFileSync('/bin/sync');
      }
      return samples;
    }

    const nodeFloor = await lib.timeProcess(process.execPath, ['-e', '0'], {
      env: lib.agentEnv('create', request(randomUUID(), 1), PLUGIN),
      runs: 10,
      warmup: 2,
    });
    const small = await cycle(1, 5);
    const large = await cycle(10, 5);
    const largeXfs = await cycle(10, 5, { fs: 'xfs' });
    const dd1 = await ddThenMkfs(1, 3);
    const dd10 = await ddThenMkfs(10, 2);

    const leftovers = (await readFile('/proc/self/mountinfo', 'utf8'))
      .split('\n')
      .filter((l) => l.includes(volumesDir));
    if (leftovers.length > 0) throw new Error(`the benchmark left mounts behind: ${leftovers.join('; ')}`);
    return {
      title: 'dhv-loopback create and delete vs dd-then-mkfs',
      note:
        'The bundled packages/plugin-loopback/dist/dhv-loopback run as `<plugin> create|delete` with exactly the agent environment, ' +
        'each run a fresh volume (sparse image + mkfs + loop device + mount; delete: unmount, detach, remove). ' +
        "The baseline is what Nomad's example loopback plugin spends before it can mount: `dd if=/dev/zero` of the whole image, then `mkfs.ext4` " +
        '(page cache, no fsync; `sync` between runs, untimed). `node -e 0` is the floor of any Node plugin. Needs root.',
      rows: [
        { label: 'dd + mkfs.ext4, 10 GiB', samplesMs: dd10, baseline: true },
        { label: 'dd + mkfs.ext4, 1 GiB', samplesMs: dd1 },
        { label: 'node -e 0', samplesMs: nodeFloor },
        { label: 'dhv-loopback create, 1 GiB ext4', samplesMs: small.create },
        { label: 'dhv-loopback delete, 1 GiB ext4', samplesMs: small.del },
        {
          label: 'dhv-loopback create, 10 GiB ext4',
          samplesMs: large.create,
          target: '< 150 ms, ≤ 0.033× (30× faster)',
        },
        { label: 'dhv-loopback delete, 10 GiB ext4', samplesMs: large.del },
        { label: 'dhv-loopback create, 10 GiB xfs', samplesMs: largeXfs.create, target: '< 150 ms' },
        { label: 'dhv-loopback delete, 10 GiB xfs', samplesMs: largeXfs.del },
      ],
    };
  } finally {
    await lib.removeScratch(volumesDir);
  }
}
