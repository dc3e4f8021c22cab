import { readFile, readdir } from 'node:fs/promises';
import { isStrictlyInside, runTool } from '@dhv/sdk';
import { AgentError } from '../errors/agent-error.js';

export interface RebootReport {
  unmounted: string[];
  detached: Array<{ device: string; backingFile: string }>;
}

/**
 * What a host reboot does to the volumes dir: every mount under it goes away (deepest
 * first, so nested mounts come off before their parents), and so does every loop
 * device whose backing file lives there. Restore then has to bring them back for real.
 */
export async function simulateReboot(volumesDir: string, signal?: AbortSignal): Promise<RebootReport> {
  const opts = signal ? { signal } : {};
  const mounts = (await mountsUnder(volumesDir)).sort((a, b) => depth(b) - depth(a) || b.localeCompare(a));
  const unmounted: string[] = [];
  for (const mountPoint of mounts) {
    try {
      await runTool('umount', [mountPoint], { ...opts, debianPackage: 'mount' });
    } catch (err) {
      throw new AgentError('REBOOT_FAILED', `could not unmount ${mountPoint}: ${(err as Error).message}; something may still be using it (see fuser -m ${mountPoint})`, {
        mountPoint,
      });
    }
    unmounted.push(mountPoint);
  }
  const detached: RebootReport['detached'] = [];
  for (const loop of await loopDevicesBackedUnder(volumesDir)) {
    try {
      await runTool('losetup', ['-d', loop.device], { ...opts, debianPackage: 'mount' });
    } catch (err) {
      throw new AgentError('REBOOT_FAILED', `could not detach ${loop.device} (backed by ${loop.backingFile}): ${(err as Error).message}`, { ...loop });
    }
    detached.push(loop);
  }
  return { unmounted, detached };
}

/** Mount points below `dir` (not `dir` itself, which a host would mount again at boot), from /proc/self/mountinfo (field 5, octal escapes decoded). */
export async function mountsUnder(dir: string): Promise<string[]> {
  const text = await readFile('/proc/self/mountinfo', 'utf8');
  const points = text
    .split('\n')
    .filter(Boolean)
    .map((line) => unescapeMountPath(line.split(' ')[4] ?? ''));
  return [...new Set(points.filter((p) => isStrictlyInside(dir, p)))];
}

/** Loop devices whose backing file is below `dir`, from /sys/block/loop*\/loop/backing_file. */
export async function loopDevicesBackedUnder(dir: string): Promise<Array<{ device: string; backingFile: string }>> {
  let entries: string[];
  try {
    entries = await readdir('/sys/block');
  } catch {
    return [];
  }
  const out: Array<{ device: string; backingFile: string }> = [];
  for (const name of entries.filter((e) => /^loop[0-9]+$/.test(e)).sort()) {
    const backing = await readFile(`/sys/block/${name}/loop/backing_file`, 'utf8').catch(() => '');
    const backingFile = backing.trim().replace(/ \(deleted\)$/, '');
    if (backingFile !== '' && isStrictlyInside(dir, backingFile)) out.push({ device: `/dev/${name}`, backingFile });
  }
  return out;
}

function unescapeMountPath(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_m, oct: string) => String.fromCharCode(parseInt(oct, 8)));
}

function depth(path: string): number {
  return path.split('/').length;
}
