import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { definePlugin } from './define-plugin.js';
import { parameterSchema } from '../helpers/parameter-schema.js';
import { choice, mkdirMode } from '../helpers/parameter-fields.js';
import { sampleCreateEnv, SAMPLE_COMMON_ENV, SAMPLE_VOLUME_ID } from '../protocol/__fixtures__/agent-environment.js';
import { ENV } from '../protocol/variables.js';

const PARAMETERS = parameterSchema({
  fs: choice(['ext4', 'xfs'], { default: 'ext4', fixed: true }),
  mode: mkdirMode(),
});

let volumesDir: string;
let calls: { changed: readonly string[] | undefined; mode: number }[];

const plugin = definePlugin({
  name: 'declares',
  version: '1.0.0',
  parameters: PARAMETERS,
  create: (request, ctx) => {
    calls.push({ changed: ctx.changedParameters, mode: PARAMETERS.read(request.parameters).mode });
    return { path: join(request.volumesDir, request.volumeId), bytes: 0 };
  },
  delete: () => {},
});

const create = (parameters: Record<string, string> | null) =>
  plugin.invoke({
    argv: ['create'],
    env: sampleCreateEnv({ [ENV.volumesDir]: volumesDir, [ENV.parameters]: JSON.stringify(parameters) }),
  });
const remove = (createdPath: string) =>
  plugin.invoke({
    argv: ['delete'],
    env: {
      ...SAMPLE_COMMON_ENV,
      [ENV.operation]: 'delete',
      [ENV.volumesDir]: volumesDir,
      [ENV.createdPath]: createdPath,
    },
  });

beforeEach(async () => {
  volumesDir = await mkdtemp(join(tmpdir(), 'dhv-declared-'));
  calls = [];
});
afterEach(async () => {
  await rm(volumesDir, { recursive: true, force: true });
});

describe('a plugin that declares its parameters', () => {
  it('refuses parameters its schema refuses before the handler runs', async () => {
    const result = await create({ fs: 'btrfs' });
    expect(result.exitCode).toBe(1);
    expect(JSON.parse(result.stdout)).toEqual({
      error: 'invalid parameters: fs must be one of ext4, xfs, got "btrfs"',
    });
    expect(calls).toEqual([]);
  });

  it("tells the handler nothing on a volume's first create, then what each update changed", async () => {
    expect((await create({ mode: '0750' })).exitCode).toBe(0);
    expect((await create({ mode: '750' })).exitCode).toBe(0); // a restore: the same values
    expect((await create({ mode: '0700' })).exitCode).toBe(0);
    expect(calls).toEqual([
      { changed: undefined, mode: 0o750 },
      { changed: [], mode: 0o750 },
      { changed: ['mode'], mode: 0o700 },
    ]);
  });

  it('refuses an update that changes a fixed parameter, and keeps the parameters the volume has', async () => {
    await create({ fs: 'xfs' });
    const refused = await create({ fs: 'ext4' });
    expect(refused.exitCode).toBe(1);
    expect(JSON.parse(refused.stdout).error).toBe(
      'parameter fs cannot change on update (fs was "xfs" and the update asks for "ext4"); to change it, delete the volume and create it again',
    );
    expect(calls).toHaveLength(1);
    expect((await create({ fs: 'xfs', mode: '0755' })).exitCode).toBe(0);
    expect(calls.at(-1)!.changed).toEqual(['mode']);
  });

  it('forgets a deleted volume, the cleanup delete included, and leaves no folder of its own', async () => {
    await create({ fs: 'xfs' });
    expect(await readdir(volumesDir)).toEqual(['.declares']);
    expect((await remove(join(volumesDir, SAMPLE_VOLUME_ID))).exitCode).toBe(0);
    expect(await readdir(volumesDir)).toEqual([]);
    expect((await create({ fs: 'ext4' })).exitCode).toBe(0); // a new volume of that ID, made afresh
    expect(calls.at(-1)!.changed).toBeUndefined();
    expect((await remove(volumesDir)).exitCode).toBe(0); // the agent's cleanup delete
    expect(await readdir(volumesDir)).toEqual([]);
  });
});
