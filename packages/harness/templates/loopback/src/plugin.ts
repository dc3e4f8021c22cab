import { mkdir, rename, rm, rmdir, stat } from 'node:fs/promises';
import { PluginFailure, acquireVolumeLock, definePlugin, expectCreatedPath, pickCapacity, volumePath, withVolumeLock } from '@dhv/sdk/plugin';
import * as host from '@dhv/sdk/host';

// {{pluginId}}: each volume is an ext4 filesystem in a sparse image, loop-mounted at `<volumes dir>/<id>`, as root. A create
// asking for more grows it. `@dhv/sdk/host` runs the tools without PATH and names the package of a missing one.
const TOOLS: host.HostTool[] = ['mkfs.ext4', 'mount', 'umount', 'losetup', 'e2fsck', 'resize2fs'];
const MIN_SIZE = 8n * 1024n * 1024n; // what mkfs.ext4 needs; also the size when the spec sets no capacity

export default definePlugin({
  name: '{{pluginId}}',
  version: '0.1.0',
  async create(request, ctx) {
    host.checkHost({ plugin: '{{pluginId}}', loopDevices: true, tools: TOOLS });
    const [path, signal] = [volumePath(request.volumesDir, request.volumeId), ctx.signal];
    const { capacityMinBytes: min, capacityMaxBytes: max } = request; // whole 4 KiB blocks, at least MIN_SIZE, within the spec's range
    const size = pickCapacity(min, max, { minimum: MIN_SIZE, granularity: 4096n, fallback: MIN_SIZE });
    const [image, partial] = [`${path}.img`, `${path}.img.partial`];
    // When the handler throws, the runtime runs the ctx.undo actions, newest first: the lock is released last.
    const release = await acquireVolumeLock(`${path}.lock`, { signal, folderMode: 0o711 });
    ctx.undo('release the lock', release);
    const current = await host.imageSize(image); // an image already: a restore, or a growth
    if (current === undefined) {
      ctx.undo(`make ${image}`, async () => { await host.removeFile(partial); await host.removeFile(image); });
      await host.removeFile(partial);
      await host.createSparseImage(partial, size);
      await host.makeFilesystem('ext4', partial, { signal });
      await rename(partial, image); // only now: a killed create never leaves an image a later one would mount
    }
    const mounted = (await host.mountsAt(path)).at(-1)?.source; // mounted already: a restore after an agent restart
    const device = mounted ?? (await host.attachLoopDevice(image, { signal }));
    if (mounted === undefined) {
      ctx.undo(`attach ${device}`, () => host.detachLoopDevice(device));
      await mkdir(path, { recursive: true, mode: 0o755 });
      ctx.undo(`make ${path}`, () => rmdir(path));
      await host.mount(device, path, 'ext4', [], { signal });
      ctx.undo(`mount ${path}`, () => host.unmount(path));
    }
    if (current !== undefined && size > current) {
      let grown = false; // the filesystem grew although growFilesystem failed (resize2fs killed late): the image keeps its size
      await host.resizeImage(image, size);
      ctx.undo(`grow ${image}`, async () => { if (!grown) await host.resizeImage(image, current).then(() => host.refreshLoopCapacity(device)); });
      await host.refreshLoopCapacity(device, { signal });
      await host.growFilesystem({ fs: 'ext4', device, mountPath: path }, { signal }).catch((err: unknown) => { // offline when it must
        grown = err instanceof PluginFailure && err.details.filesystemGrown === true;
        throw err;
      });
    }
    await release();
    return { path, bytes: current !== undefined && current > size ? current : size };
  },
  async delete(request, ctx) {
    const path = volumePath(request.volumesDir, request.volumeId); // never createdPath: a cleanup delete sends the volumes dir
    expectCreatedPath(request.createdPath, path);
    if (!(await stat(request.volumesDir).catch(() => undefined))) return; // no volumes dir, no volume: make nothing
    await withVolumeLock(`${path}.lock`, async () => {
      const mounts = (await host.mountsAt(path)).length; // one in use is refused (VolumeBusyError), nothing removed
      for (let i = 0; i < mounts; i++) await host.unmount(path, { signal: ctx.signal });
      await host.detachLoopDevicesOfImage(`${path}.img`, { signal: ctx.signal });
      await Promise.all([host.removeFile(`${path}.img`), host.removeFile(`${path}.img.partial`), rm(path, { recursive: true, force: true })]);
    }, { signal: ctx.signal });
  },
});
