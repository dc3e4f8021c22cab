import { chmod, mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RecordedCall } from './recorded-call.js';
import { replayTrace } from './replay.js';
import { BASH_PLUGIN } from '../../../../test/support/awkward-plugin.js';
import { removeTempDir, tempDir } from '../../../../test/support/kit.js';

/**
 * `dhv replay` in process: a trace written as `dhv record` writes it, replayed against small
 * bash builds of the plugin; the report is what the command prints (presenters/format-record.test.ts: its text).
 */

let dir = '';
afterEach(async () => {
  if (dir) await removeTempDir(dir);
  dir = '';
});

const VOLUME_ID = '1e1d4540-14f9-2515-8502-24d46291717d';
/** Where the recorded agent kept its volumes: a replay maps it into its sandbox and back. */
const VOLUMES = '/srv/nomad/host_volumes';

const env = (operation: string): Record<string, string> => ({
  DHV_OPERATION: operation,
  ...(operation === 'fingerprint'
    ? {}
    : {
        DHV_VOLUMES_DIR: VOLUMES,
        DHV_PLUGIN_DIR: '/srv/nomad/plugins',
        DHV_NAMESPACE: 'default',
        DHV_VOLUME_NAME: 'data',
        DHV_VOLUME_ID: VOLUME_ID,
        DHV_NODE_ID: '9b6b4a1c-0d51-4d2c-a4a5-8f1b5d1f2e3a',
        DHV_NODE_POOL: 'default',
        DHV_PARAMETERS: '{}',
      }),
  ...(operation === 'delete' ? { DHV_CREATED_PATH: `${VOLUMES}/${VOLUME_ID}` } : {}),
});

/** What `dhv record` logged of build 1.0.0 (delete exits 3): one fingerprint, create, delete. */
const recorded: RecordedCall[] = [
  {
    plugin: 'odd',
    argv: ['fingerprint'],
    env: env('fingerprint'),
    exit: 0,
    stdout: '{"version": "1.0.0"}\n',
    stderr: '',
    duration_ms: 4,
  },
  {
    plugin: 'odd',
    argv: ['create'],
    env: env('create'),
    exit: 0,
    stdout: `{"path": "${VOLUMES}/${VOLUME_ID}", "bytes": 1048576}`,
    stderr_base64: Buffer.from('raw \xff\xfe bytes\n', 'latin1').toString('base64'),
    duration_ms: 6,
  },
  {
    plugin: 'odd',
    argv: ['delete'],
    env: env('delete'),
    exit: 3,
    stdout: '',
    stderr: `cannot delete ${VOLUME_ID}\n`,
    duration_ms: 5,
  },
];

async function setUp(
  lines: string[],
  builds: Record<string, string>,
): Promise<{ trace: string; builds: Record<string, string> }> {
  dir = await tempDir('replay-test');
  const trace = join(dir, 'calls.jsonl');
  await writeFile(trace, lines.map((l) => `${l}\n`).join(''));
  const paths: Record<string, string> = {};
  for (const [name, text] of Object.entries(builds)) {
    paths[name] = join(dir, name);
    await writeFile(paths[name], text);
    await chmod(paths[name], 0o755);
  }
  return { trace, builds: paths };
}

describe('a replay', () => {
  it('finds no difference against the build that was recorded, and leaves no sandbox', async () => {
    const { trace, builds } = await setUp(
      recorded.map((c) => JSON.stringify(c)),
      { odd: BASH_PLUGIN('1.0.0', 3) },
    );
    const sandboxes = join(dir, 'tmp');
    await mkdir(sandboxes);
    const report = await replayTrace({ trace, plugin: builds.odd!, tmpDir: sandboxes });
    expect(report).toMatchObject({ pluginId: 'odd', calls: 3, same: 3, differ: 0, differing: [], recordedMs: 15 });
    expect(report.cleanupProblems).toEqual([]);
    expect(await readdir(sandboxes)).toEqual([]);
    expect(report.plugin).toBe(builds.odd);
    expect(report.pluginMs).toBeGreaterThan(0);
  });

  it('names each field a changed build answers differently, as bytes and as the agent reads them', async () => {
    const { trace, builds } = await setUp(
      recorded.map((c) => JSON.stringify(c)),
      { changed: BASH_PLUGIN('1.1.0', 0) },
    );
    const report = await replayTrace({ trace, plugin: builds.changed!, tmpDir: dir });
    expect(report.differing).toEqual([
      {
        index: 1,
        where: 'line 1',
        operation: 'fingerprint',
        volumeId: undefined,
        differences: [
          { field: 'stdout', recorded: '{"version": "1.0.0"}\n', replayed: '{"version": "1.1.0"}\n' },
          { field: 'version', recorded: '1.0.0', replayed: '1.1.0' },
        ],
      },
      {
        index: 3,
        where: 'line 3',
        operation: 'delete',
        volumeId: VOLUME_ID,
        differences: [
          { field: 'exit', recorded: 'exit 3', replayed: 'exit 0' },
          {
            field: 'error',
            recorded: `error reading plugin response when deleting volume "${VOLUME_ID}" with plugin "odd": original error: exit status 3`,
            replayed: '(none)',
          },
        ],
      },
    ]);
    expect([report.same, report.differ]).toEqual([1, 2]);

    // What the agent only logs can be left out: stderr, and here stdout and version too.
    const ignoring = await replayTrace({ trace, plugin: builds.changed!, tmpDir: dir, ignore: ['stdout', 'version'] });
    expect(ignoring.differing.map((d) => d.index)).toEqual([3]);
  });

  it("replays one plugin of several, by its file's name or --id, and says what it left out and skipped", async () => {
    const other = { ...recorded[0]!, plugin: 'other' };
    const lines = [JSON.stringify(other), JSON.stringify(recorded[0]), JSON.stringify(other), '{"plugin": "odd", "ar'];
    const { trace, builds } = await setUp(lines, { odd: BASH_PLUGIN('1.0.0', 3), build: BASH_PLUGIN('1.0.0', 3) });
    const report = await replayTrace({ trace, plugin: builds.odd!, tmpDir: dir });
    expect(report).toMatchObject({ pluginId: 'odd', calls: 1, same: 1, otherPlugins: { other: 2 } });
    expect(report.skipped).toEqual(['line 4: not JSON (a line cut short?)']);
    expect(report.recordedMs).toBe(4);

    await expect(replayTrace({ trace, plugin: builds.build!, tmpDir: dir })).rejects.toThrow(
      'the trace has calls of 2 plugins (other, odd); name the one to replay with --id',
    );
    expect((await replayTrace({ trace, plugin: builds.build!, pluginId: 'other', tmpDir: dir })).calls).toBe(2);
    await expect(replayTrace({ trace, plugin: builds.build!, pluginId: 'third', tmpDir: dir })).rejects.toMatchObject({
      code: 'TRACE_NO_PLUGIN',
      message: 'the trace has no call of plugin "third" (it has: other, odd)',
    });
  });

  it('refuses a plugin it cannot run, and a trace with no call, as usage mistakes', async () => {
    const { trace, builds } = await setUp([], { odd: BASH_PLUGIN('1.0.0', 3) });
    await expect(replayTrace({ trace, plugin: builds.odd!, tmpDir: dir })).rejects.toMatchObject({
      code: 'TRACE_NO_PLUGIN',
      message: 'the trace holds no plugin call',
      exitCode: 2,
    });
    await chmod(builds.odd!, 0o644);
    await expect(replayTrace({ trace, plugin: builds.odd!, tmpDir: dir })).rejects.toMatchObject({
      code: 'REPLAY_NO_PLUGIN',
      message: `cannot run the plugin ${builds.odd}: EACCES`,
      exitCode: 2,
    });
  });

  it('stops at an abort between calls, and still removes its sandbox', async () => {
    const { trace, builds } = await setUp(
      recorded.map((c) => JSON.stringify(c)),
      { odd: BASH_PLUGIN('1.0.0', 3) },
    );
    const controller = new AbortController();
    controller.abort(new Error('stopped'));
    const before = await readdir(dir);
    await expect(replayTrace({ trace, plugin: builds.odd!, tmpDir: dir, signal: controller.signal })).rejects.toThrow(
      'stopped',
    );
    expect(await readdir(dir)).toEqual(before);
  });
});
