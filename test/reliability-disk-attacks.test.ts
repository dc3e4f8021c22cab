import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, chown, lstat, mkdir, readlink, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PluginError, resolvePlugin } from '@dhv/sdk/client';
import { runAsDhv } from './support/run-as-dhv.js';
import { builtPlugin, type ReferencePlugin, tempDir, removeTempDir, skipRootTests } from './support/kit.js';
import { snapshotTree } from './support/tree-snapshot.js';
import { expectPluginError } from './support/plugin-error.js';

/**
 * Attacks on the disk: links planted where a plugin writes, plugin IDs that
 * try to leave the plugin dir, and a volumes dir on a filesystem that is nearly full.
 * Each attack is refused with a clear error and the victim stays exactly as it was.
 */

const MiB = 1024 * 1024;
const VOLUME_ID = '3c9d2b1a-8e7f-4a6b-9c5d-4e3f2a1b0c9d';
const isRoot = process.getuid?.() === 0;
const skipRoot = skipRootTests('attacks on the disk as root (dhv-loopback, a nearly full tmpfs)');

let sandbox: string;
let volumesDir: string;
let victim: string;

beforeEach(async () => {
  sandbox = await tempDir('attack');
  volumesDir = join(sandbox, 'volumes');
  victim = join(sandbox, 'victim');
  await mkdir(volumesDir);
  await mkdir(join(victim, 'inner'), { recursive: true });
  await writeFile(join(victim, 'secret.txt'), 'the victim keeps this\n', { mode: 0o640 });
  await writeFile(join(victim, 'disk.img'), Buffer.alloc(64 * 1024, 0xab), { mode: 0o600 });
  await writeFile(join(victim, 'inner', 'deep.txt'), 'deeper\n');
  await chmod(victim, 0o751);
  // An owner the plugin would never pick, so a chown through the link would show.
  if (isRoot) await chown(victim, 4321, 4321);
});

afterEach(async () => {
  await removeTempDir(sandbox);
});

const createRequest = (capacityMinBytes = 16 * MiB) => ({
  volumesDir,
  volumeName: 'attacked',
  volumeId: VOLUME_ID,
  nodeId: 'node-1',
  capacityMinBytes,
  capacityMaxBytes: 0,
});
const deleteRequest = () => ({
  volumesDir,
  volumeName: 'attacked',
  volumeId: VOLUME_ID,
  nodeId: 'node-1',
  createdPath: join(volumesDir, VOLUME_ID),
});

const failure = (run: Promise<unknown>) => expectPluginError(run, 'the plugin must refuse');

function describeFor(plugin: ReferencePlugin, body: (executable: () => string) => void) {
  const needsRoot = plugin === 'dhv-loopback';
  describe.skipIf(needsRoot && skipRoot)(plugin, () => {
    let executable = '';
    beforeAll(() => {
      executable = builtPlugin(plugin);
    }, 120_000);
    body(() => executable);
  });
}

for (const plugin of ['dhv-mkdir', 'dhv-loopback'] as const) {
  describeFor(plugin, (executable) => {
    it('a symlink planted at <volumes dir>/<id> to a victim dir: create refuses, and the victim keeps contents, mode and owner', async () => {
      const link = join(volumesDir, VOLUME_ID);
      await symlink(victim, link);
      const before = await snapshotTree(victim);

      const err = await failure(runAsDhv(executable(), 'create', createRequest()));

      expect(err.code).toBe('PLUGIN_FAILED');
      expect(err.message).toMatch(/link/i);
      expect(err.message).toContain(link);
      expect(await snapshotTree(victim)).toEqual(before);
      expect(await readlink(link)).toBe(victim);
    });

    it('a symlink planted at <volumes dir>/<id>: delete removes only the link', async () => {
      const link = join(volumesDir, VOLUME_ID);
      await symlink(victim, link);
      const before = await snapshotTree(victim);

      await runAsDhv(executable(), 'delete', deleteRequest());

      expect(
        existsSync(link) ||
          (await lstat(link).then(
            () => true,
            () => false,
          )),
      ).toBe(false);
      expect(await snapshotTree(victim)).toEqual(before);
    });
  });
}

describeFor('dhv-loopback', (executable) => {
  const stateDir = () => join(volumesDir, '.dhv-loopback');

  it('a symlink planted at the image folder: create refuses, the victim dir is untouched', async () => {
    await symlink(victim, stateDir());
    const before = await snapshotTree(victim);

    const err = await failure(runAsDhv(executable(), 'create', createRequest()));

    expect(err.message).toMatch(/symlink|link/i);
    expect(await snapshotTree(victim)).toEqual(before);
    expect(existsSync(join(victim, `${VOLUME_ID}.img`))).toBe(false);
  });

  for (const suffix of ['.img', '.img.partial', '.lock']) {
    it(`a symlink planted at <image folder>/<id>${suffix} to a victim file: create refuses or steps around it, and the victim file is untouched`, async () => {
      await mkdir(stateDir(), { mode: 0o700 });
      const planted = join(stateDir(), `${VOLUME_ID}${suffix}`);
      await symlink(join(victim, 'disk.img'), planted);
      const before = await snapshotTree(victim);

      const outcome = await runAsDhv(executable(), 'create', createRequest()).then(
        (result) => ({ ok: true as const, result }),
        (error: unknown) => ({ ok: false as const, error }),
      );

      expect(await snapshotTree(victim)).toEqual(before);
      if (suffix === '.img') {
        // The image itself is what a restore would mount: a link there must never be used.
        expect(outcome.ok).toBe(false);
        expect(String((outcome as { error: unknown }).error)).toMatch(/link|not a regular file/i);
      }
      if (outcome.ok) await runAsDhv(executable(), 'delete', deleteRequest());
      expect(await snapshotTree(victim)).toEqual(before);
    });
  }

  it('a symlink planted at the image path: delete removes the link, never the victim file', async () => {
    await mkdir(stateDir(), { mode: 0o700 });
    await symlink(join(victim, 'disk.img'), join(stateDir(), `${VOLUME_ID}.img`));
    const before = await snapshotTree(victim);

    await runAsDhv(executable(), 'delete', deleteRequest()).catch(() => undefined);

    expect(await snapshotTree(victim)).toEqual(before);
  });
});

describe('a plugin ID that escapes the plugin dir', () => {
  let pluginDir: string;
  let marker: string;

  beforeEach(async () => {
    pluginDir = join(sandbox, 'plugins');
    await mkdir(pluginDir);
    marker = join(sandbox, 'escaped-plugin-ran');
    // A runnable script just outside the plugin dir: if anything runs it, the marker appears.
    await writeFile(join(sandbox, 'evil'), `#!/bin/bash\n/usr/bin/touch ${marker}\necho '{"version": "1.0.0"}'\n`, {
      mode: 0o755,
    });
    await symlink(join(sandbox, 'evil'), join(pluginDir, 'linked-evil'));
  });

  const ids = () => [
    ['../bin/sh', '../bin/sh'],
    ['a path up and back to the script', '../evil'],
    ['an absolute path', join(sandbox, 'evil')],
    ['/bin/sh', '/bin/sh'],
    ['a symlink out of the plugin dir', 'linked-evil'],
    ['..', '..'],
    ['empty', ''],
    ['a NUL byte', 'evil\0'],
  ];

  it('is "no such plugin", and nothing is executed', async () => {
    for (const [what, id] of ids()) {
      const err = await resolvePlugin(pluginDir, id!).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err, what).toBeInstanceOf(PluginError);
      expect((err as PluginError).code, what).toBe('PLUGIN_NOT_FOUND');
      expect((err as PluginError).message, what).toMatch(/no such plugin/);
    }
    // "." names the plugin dir itself: a directory, which Nomad calls not executable.
    await expect(resolvePlugin(pluginDir, '.')).rejects.toMatchObject({
      code: 'PLUGIN_NOT_EXECUTABLE',
      nomadMessage: 'plugin not executable: "."',
    });
    expect(existsSync(marker)).toBe(false);
  });
});

describe.skipIf(skipRoot)('a volumes dir on a nearly full filesystem', () => {
  let small: string;

  beforeEach(async () => {
    small = join(sandbox, 'small');
    await mkdir(small);
    execFileSync('/usr/bin/mount', ['-t', 'tmpfs', '-o', 'size=8m,mode=0755', 'dhv-nearly-full', small]);
    // Leave about 1 MiB free.
    execFileSync('/usr/bin/fallocate', ['-l', `${7 * MiB}`, join(small, 'ballast')]);
    volumesDir = join(small, 'volumes');
    await mkdir(volumesDir);
  });

  for (const plugin of ['dhv-mkdir', 'dhv-loopback'] as const) {
    it(`${plugin} fails cleanly with both numbers in human units, and leaves nothing`, async () => {
      const executable = builtPlugin(plugin);
      const before = await snapshotTree(small);

      const err = await failure(runAsDhv(executable, 'create', createRequest(16 * MiB)));

      expect(err.code).toBe('PLUGIN_FAILED');
      // The request (16 MiB) and what is free (about 1 MiB), as a person reads sizes.
      expect(err.pluginMessage).toMatch(/16 ?MiB|16\.0 ?MiB|17 ?MB|16\.8 ?MB/);
      expect(err.pluginMessage).toMatch(/(1(\.\d+)? ?MiB|1(\.\d+)? ?MB|[0-9]+(\.\d+)? ?KiB|[0-9]+(\.\d+)? ?kB)/);
      // dhv-loopback removes its hidden image folder again once it is empty.
      const after = await snapshotTree(small);
      expect(after).toEqual(before);
      expect(existsSync(join(volumesDir, VOLUME_ID))).toBe(false);
    });
  }
});
