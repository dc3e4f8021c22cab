import { lstat, mkdir, readFile, stat, symlink, writeFile, chmod } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildEnvironment, PluginError } from '@dhv/sdk/client';
import { runAsDhv } from './support/run-as-dhv.js';
import {
  create,
  createRequest,
  listTree,
  modeOf,
  newVolumeId,
  MKDIR_PACKAGE_DIR,
  snapshot,
  wrapPlugin,
  useBuiltPlugin,
} from './support/mkdir-plugin.js';
import { tempDir, removeTempDir } from './support/kit.js';

const plugin = useBuiltPlugin();

let dir: string;
let volumesDir: string;
afterEach(async () => {
  await removeTempDir(dir);
});
async function setup() {
  dir = await tempDir();
  volumesDir = join(dir, 'volumes');
  await mkdir(volumesDir);
}

const failed = (message: string | RegExp) =>
  expect.objectContaining({
    code: 'PLUGIN_FAILED',
    pluginMessage: typeof message === 'string' ? expect.stringContaining(message) : expect.stringMatching(message),
  });

describe('dhv-mkdir create: the directory', () => {
  it('creates <volumes dir>/<volume id> and returns that path with the free space as bytes', async () => {
    await setup();
    const id = newVolumeId();
    const result = await create(plugin.executable, createRequest(volumesDir, id));
    expect(result.path).toBe(join(volumesDir, id));
    expect((await stat(result.path)).isDirectory()).toBe(true);
    expect(result.bytes).toBeGreaterThan(0n);
  });

  it('applies the default mode 0700 exactly under umask 000', async () => {
    await setup();
    const wrapper = await wrapPlugin(dir, plugin.executable, 'umask000', 'umask 000');
    const result = await create(wrapper, createRequest(volumesDir, newVolumeId()));
    expect((await modeOf(result.path)).toString(8)).toBe('700');
  });

  it.each([
    ['077', '0777', 0o777],
    ['077', '0755', 0o755],
    ['000', '0750', 0o750],
    ['000', '0700', 0o700],
    // As Nomad's built-in mkdir: Unix setuid/setgid/sticky are dropped, Go's own mode bits set them.
    ['022', '2770', 0o770],
    ['077', '1777', 0o777],
    ['022', '20000775', 0o2775],
    ['027', '0', 0],
  ])('under umask %s, mode %s is applied exactly', async (umask, mode, expected) => {
    await setup();
    const wrapper = await wrapPlugin(dir, plugin.executable, `umask${umask}`, `umask ${umask}`);
    const result = await create(wrapper, createRequest(volumesDir, newVolumeId(), { parameters: { mode } }));
    expect((await modeOf(result.path)).toString(8)).toBe(expected.toString(8));
  });

  it('is idempotent: a second create returns the same path and changes nothing', async () => {
    await setup();
    const id = newVolumeId();
    const request = createRequest(volumesDir, id, { parameters: { mode: '0750' } });
    const first = await create(plugin.executable, request);
    await writeFile(join(first.path, 'data'), 'kept');
    const second = await create(plugin.executable, request);
    expect(second.path).toBe(first.path);
    expect(await readFile(join(second.path, 'data'), 'utf8')).toBe('kept');
    expect(await modeOf(second.path)).toBe(0o750);
  });

  it('leaves an existing directory exactly as it is, even when the request asks for another mode (restore after restart)', async () => {
    await setup();
    const id = newVolumeId();
    const path = join(volumesDir, id);
    await mkdir(path);
    await chmod(path, 0o755);
    await writeFile(join(path, 'data'), 'kept');
    const before = await snapshot(path);
    const result = await create(plugin.executable, createRequest(volumesDir, id, { parameters: { mode: '0700' } }));
    expect(result.path).toBe(path);
    expect(await snapshot(path)).toEqual(before);
  });

  it('never fails an existing volume on capacity_min, and still reports its free space', async () => {
    await setup();
    const id = newVolumeId();
    await mkdir(join(volumesDir, id));
    const result = await create(plugin.executable, createRequest(volumesDir, id, { capacityMinBytes: 2n ** 62n }));
    expect(result.bytes).toBeGreaterThan(0n);
  });

  it('refuses a path that exists but is not a directory, and leaves it alone', async () => {
    await setup();
    const id = newVolumeId();
    await writeFile(join(volumesDir, id), 'not a volume');
    await expect(create(plugin.executable, createRequest(volumesDir, id))).rejects.toEqual(
      failed('is a regular file, not a directory'),
    );
    expect(await readFile(join(volumesDir, id), 'utf8')).toBe('not a volume');
  });
});

describe('dhv-mkdir create: parameters', () => {
  it('names an unknown parameter, and creates nothing', async () => {
    await setup();
    const id = newVolumeId();
    const err = await create(
      plugin.executable,
      createRequest(volumesDir, id, { parameters: { mode: '0700', owner: 'alice' } }),
    ).catch((e) => e);
    expect(err).toBeInstanceOf(PluginError);
    expect(err.pluginMessage).toContain('unknown parameter "owner"');
    expect(await listTree(volumesDir)).toEqual([]);
  });

  it.each([
    ['mode', '0800'],
    ['mode', 'rwxr-x---'],
    ['mode', '0o755'],
    ['mode', '40000000000'],
    ['mode', ''],
    ['uid', 'alice'],
    ['uid', '1.5'],
    ['gid', '99999999999999999999'],
    ['gid', ' 10'],
  ])('names the parameter and the value of a bad %s %j, and creates nothing', async (name, value) => {
    await setup();
    const err = await create(
      plugin.executable,
      createRequest(volumesDir, newVolumeId(), { parameters: { [name]: value } }),
    ).catch((e) => e);
    expect(err).toMatchObject({ code: 'PLUGIN_FAILED' });
    expect(err.pluginMessage).toContain(`invalid value for "${name}": strconv.`);
    expect(err.pluginMessage).toContain(JSON.stringify(value));
    expect(await listTree(volumesDir)).toEqual([]);
  });

  it('reports every bad parameter at once', async () => {
    await setup();
    const err = await create(
      plugin.executable,
      createRequest(volumesDir, newVolumeId(), { parameters: { mode: 'x', uid: 'y', size: '1G' } }),
    ).catch((e) => e);
    expect(err.pluginMessage).toMatch(/"mode".*"size".*"uid"/);
  });

  it('accepts no parameters at all (DHV_PARAMETERS is null) and an empty object', async () => {
    await setup();
    await create(plugin.executable, createRequest(volumesDir, newVolumeId(), { parameters: null }));
    await create(plugin.executable, createRequest(volumesDir, newVolumeId(), { parameters: {} }));
    expect(await listTree(volumesDir)).toHaveLength(2);
  });
});

describe('dhv-mkdir create: capacity', () => {
  it('caps bytes at capacity_max', async () => {
    await setup();
    const result = await create(
      plugin.executable,
      createRequest(volumesDir, newVolumeId(), { capacityMaxBytes: 1_000_000n }),
    );
    expect(result.bytes).toBe(1_000_000n);
  });

  it('fails when the filesystem has less free space than capacity_min, with both in human units, and leaves nothing', async () => {
    await setup();
    const err = await create(
      plugin.executable,
      createRequest(volumesDir, newVolumeId(), { capacityMinBytes: 2n ** 62n }),
    ).catch((e) => e);
    expect(err).toMatchObject({ code: 'PLUGIN_FAILED' });
    expect(err.pluginMessage).toMatch(
      /needs 4\.0 EiB \(4611686018427387904 bytes\).* has [0-9.]+ [KMGTP]iB \([0-9]+ bytes\) free/,
    );
    expect(await listTree(volumesDir)).toEqual([]);
  });

  it('fails on capacity_min before creating a missing volumes dir', async () => {
    dir = await tempDir();
    const missing = join(dir, 'volumes');
    await expect(
      create(plugin.executable, createRequest(missing, newVolumeId(), { capacityMinBytes: 2n ** 62n })),
    ).rejects.toEqual(failed('not enough free space'));
    await expect(stat(missing)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('dhv-mkdir create: the volumes dir', () => {
  it('creates a missing volumes dir with mode 0711 when its parent exists, whatever the umask', async () => {
    dir = await tempDir();
    const missing = join(dir, 'volumes');
    const wrapper = await wrapPlugin(dir, plugin.executable, 'umask077', 'umask 077');
    const result = await create(wrapper, createRequest(missing, newVolumeId()));
    expect((await modeOf(missing)).toString(8)).toBe('711');
    expect((await stat(result.path)).isDirectory()).toBe(true);
  });

  it('refuses a volumes dir whose parent is missing, says so, and creates nothing', async () => {
    dir = await tempDir();
    const deep = join(dir, 'no-such-disk', 'volumes');
    const err = await create(plugin.executable, createRequest(deep, newVolumeId())).catch((e) => e);
    expect(err).toMatchObject({ code: 'PLUGIN_FAILED' });
    expect(err.pluginMessage).toContain(`volumes dir ${deep}`);
    expect(err.pluginMessage).toContain(`neither does its parent ${join(dir, 'no-such-disk')}`);
    expect(await listTree(dir)).toEqual([]);
  });

  it('refuses a volumes dir that is a file', async () => {
    dir = await tempDir();
    const file = join(dir, 'volumes');
    await writeFile(file, '');
    await expect(create(plugin.executable, createRequest(file, newVolumeId()))).rejects.toEqual(
      failed('exists but is not a directory'),
    );
  });
});

describe('dhv-mkdir create: safety', () => {
  const traversals = [
    '..',
    '.',
    '../../etc',
    '../11111111-2222-3333-4444-555555555555',
    '11111111-2222-3333-4444-555555555555/..',
    '11111111-2222-3333-4444-555555555555/../../x',
    '/etc',
    '11111111-2222-3333-4444-55555555555/',
    '%2e%2e%2f%2e%2e',
    '..\\..\\windows',
    '11111111-2222-3333-4444-5555555555555',
    '',
  ];
  it.each(traversals)('refuses the volume ID %j before anything touches the disk', async (volumeId) => {
    dir = await tempDir();
    const missing = join(dir, 'volumes');
    await writeFile(join(dir, 'sentinel'), 'x');
    const err = await create(plugin.executable, createRequest(missing, volumeId)).catch((e) => e);
    expect(err).toBeInstanceOf(PluginError);
    expect(err.code).toBe('PLUGIN_FAILED');
    expect(err.pluginMessage).toMatch(/UUID|empty/);
    expect(await listTree(dir)).toEqual(['sentinel']);
  });

  it('refuses a volumes dir that is not absolute, creating nothing in the working directory', async () => {
    dir = await tempDir();
    const err = await create(plugin.executable, createRequest('volumes', newVolumeId()), { cwd: dir }).catch((e) => e);
    expect(err.pluginMessage).toContain('absolute');
    expect(await listTree(dir)).toEqual([]);
  });

  it('refuses a symbolic link at the volume path and never touches its target', async () => {
    await setup();
    const victim = join(dir, 'victim');
    await mkdir(victim);
    await chmod(victim, 0o755);
    await writeFile(join(victim, 'precious'), 'do not touch');
    const before = await snapshot(victim);
    const id = newVolumeId();
    await symlink(victim, join(volumesDir, id));
    const err = await create(
      plugin.executable,
      createRequest(volumesDir, id, { parameters: { mode: '0777', uid: '4321', gid: '4321' } }),
    ).catch((e) => e);
    expect(err).toMatchObject({ code: 'PLUGIN_FAILED' });
    expect(err.pluginMessage).toContain('is a symbolic link');
    expect(await snapshot(victim)).toEqual(before);
    expect((await lstat(join(volumesDir, id))).isSymbolicLink()).toBe(true);
  });

  it('refuses a dangling symbolic link at the volume path, creating nothing at its target', async () => {
    await setup();
    const id = newVolumeId();
    const target = join(dir, 'would-be-created');
    await symlink(target, join(volumesDir, id));
    await expect(create(plugin.executable, createRequest(volumesDir, id))).rejects.toEqual(
      failed('is a symbolic link'),
    );
    await expect(lstat(target)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('dhv-mkdir create: the agent environment', () => {
  it('works with no PATH and no HOME (the agent passes only DHV_* variables), finding df for the free space', async () => {
    await setup();
    const request = createRequest(volumesDir, newVolumeId());
    const env = buildEnvironment('create', request, plugin.executable);
    expect(Object.keys(env).filter((name) => !name.startsWith('DHV_'))).toEqual([]);
    const result = await create(plugin.executable, request);
    expect(result.bytes).toBeGreaterThan(0n);
  });

  it('works from / as the working directory', async () => {
    await setup();
    const result = await create(plugin.executable, createRequest(volumesDir, newVolumeId()), { cwd: '/' });
    expect((await stat(result.path)).isDirectory()).toBe(true);
  });

  it('works when its working directory has been deleted', async () => {
    await setup();
    const gone = join(dir, 'gone');
    await mkdir(gone);
    const wrapper = await wrapPlugin(
      dir,
      plugin.executable,
      'deleted-cwd',
      `cd '${gone}' && /bin/rmdir '${gone}' || exit 99`,
    );
    const result = await create(wrapper, createRequest(volumesDir, newVolumeId()));
    expect((await stat(result.path)).isDirectory()).toBe(true);
  });

  it("fingerprints with its package's version, under an environment holding only DHV_OPERATION", async () => {
    const { version } = JSON.parse(await readFile(join(MKDIR_PACKAGE_DIR, 'package.json'), 'utf8')) as {
      version: string;
    };
    const result = await runAsDhv(plugin.executable, 'fingerprint', {}, { pluginId: 'dhv-mkdir' });
    expect(result.rawVersion).toBe(version);
  });
});
