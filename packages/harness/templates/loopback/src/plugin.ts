import { mkdir, readFile, rename, rm, stat, truncate, writeFile } from 'node:fs/promises';
import {
  definePlugin,
  expectCreatedPath,
  formatSize,
  PluginFailure,
  runTool,
  volumePath,
  withVolumeLock,
  type HandlerContext,
} from '@dhv/sdk/plugin';

/**
 * {{pluginId}}: each volume is an ext4 filesystem in a sparse image file,
 * `<volumes dir>/<volume id>.img`, loop-mounted at `<volumes dir>/<volume id>`.
 * Workloads cannot write more than the volume's capacity.
 *
 * It runs system tools (mkfs.ext4, mount, umount). The agent gives plugins no PATH,
 * so never spawn a bare command name: runTool finds the tool in the system
 * directories (/usr/sbin, /sbin, ...) and names the package to install when it is
 * missing. It needs root, as the Nomad agent usually is.
 */

const MiB = 1024n * 1024n;
/** The size when the spec sets no capacity. */
const DEFAULT_SIZE = 100n * MiB;
/** mkfs.ext4 needs room for its own metadata. */
const SMALLEST_SIZE = 8n * MiB;
const BLOCK = 4096n;

/** capacity_min rounded up to whole blocks, else the default, within capacity_max. */
function imageSize(min: bigint, max: bigint): bigint {
  let size = min > 0n ? ((min + BLOCK - 1n) / BLOCK) * BLOCK : DEFAULT_SIZE;
  if (size < SMALLEST_SIZE) size = SMALLEST_SIZE;
  if (max > 0n && size > max) size = max;
  if (size < SMALLEST_SIZE) {
    throw new PluginFailure('ECAPACITY', `{{pluginId}} needs at least ${formatSize(SMALLEST_SIZE)} per volume; capacity_max is ${formatSize(max)}`);
  }
  return size;
}

/** Mount points, from the kernel's own table (no `mount` output parsing, no PATH). */
async function isMounted(path: string): Promise<boolean> {
  const table = await readFile('/proc/self/mountinfo', 'utf8');
  return table.split('\n').some((line) => {
    const mountPoint = line.split(' ')[4];
    return mountPoint?.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8))) === path;
  });
}

const exists = (path: string) => stat(path).then(() => true, () => false);

async function createVolume(path: string, image: string, size: bigint, ctx: HandlerContext): Promise<bigint> {
  if (await isMounted(path)) {
    // Restore after an agent restart, or a repeated create: the volume is healthy.
    const current = BigInt((await stat(image)).size);
    if (size > current) {
      throw new PluginFailure('ECAPACITY', `growing a volume is not supported: it has ${formatSize(current)}, capacity_min asks for ${formatSize(size)}`);
    }
    return current;
  }

  const madeImage = !(await exists(image));
  try {
    if (madeImage) {
      // Format under another name and rename: a crash never leaves a half-made image
      // that a later create would mount.
      const partial = `${image}.partial`;
      await writeFile(partial, '', { mode: 0o600 });
      await truncate(partial, Number(size)); // sparse: no blocks written, no time spent
      await runTool('mkfs.ext4', ['-q', '-F', '-m', '0', partial], { signal: ctx.signal, debianPackage: 'e2fsprogs' });
      await rename(partial, image);
    }
    await mkdir(path, { recursive: true, mode: 0o755 });
    await runTool('mount', ['-t', 'ext4', '-o', 'loop', image, path], { signal: ctx.signal, debianPackage: 'mount' });
    ctx.log(`mounted ${image} at ${path}`);
  } catch (err) {
    // The agent never calls delete after a failed create: undo everything here.
    if (!(await isMounted(path))) await rm(path, { recursive: true, force: true });
    if (madeImage) await rm(image, { force: true });
    await rm(`${image}.partial`, { force: true });
    throw err;
  }
  return BigInt((await stat(image)).size);
}

async function deleteVolume(path: string, image: string, ctx: HandlerContext): Promise<void> {
  // `mount -o loop` set up the loop device with autoclear: umount detaches it.
  if (await isMounted(path)) await runTool('umount', [path], { signal: ctx.signal, debianPackage: 'mount' });
  await rm(path, { recursive: true, force: true });
  await rm(image, { force: true });
  await rm(`${image}.partial`, { force: true });
}

export default definePlugin({
  name: '{{pluginId}}',
  version: '0.1.0',

  async create(request, ctx) {
    const path = volumePath(request.volumesDir, request.volumeId);
    const size = imageSize(request.capacityMinBytes, request.capacityMaxBytes);
    // The agent serialises operations per volume name only; a lock per volume ID keeps
    // two creates (or a create and a delete) of one volume from interleaving.
    // The agent never makes the volumes dir: the lock makes it (only it, never its parents) when missing.
    const bytes = await withVolumeLock(`${path}.lock`, () => createVolume(path, `${path}.img`, size, ctx), {
      signal: ctx.signal,
      folderMode: 0o711,
    });
    return { path, bytes };
  },

  async delete(request, ctx) {
    // Found from the ID, never from createdPath alone: on the agent's cleanup delete
    // (request.cleanup) createdPath was the volumes dir, which holds every other volume.
    const path = volumePath(request.volumesDir, request.volumeId);
    expectCreatedPath(request.createdPath, path);
    // No volumes dir, no volume: deleting what is gone succeeds, and makes nothing.
    if (!(await stat(request.volumesDir).catch(() => undefined))) return;
    await withVolumeLock(`${path}.lock`, () => deleteVolume(path, `${path}.img`, ctx), { signal: ctx.signal });
  },
});
