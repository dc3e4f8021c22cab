import { randomUUID } from 'node:crypto';
import { spawn } from 'node:child_process';
import { chmod, mkdir, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PluginError, execPlugin, resolvePlugin, type PluginErrorCode } from '@dhv/sdk/client';
import type { Operation } from '@dhv/sdk/plugin';
import { Agent, loadAgentConfig, validateVolumeSpec } from '@dhv/harness';
import { DHV_BIN, runDhv, tempDir, removeTempDir } from './support/kit.js';
import { HostileInstaller } from './support/hostile-installer.js';
import { mapLimit } from './support/map-limit.js';
import { recordedPids, survivors } from './support/processes.js';

/**
 * Hostile plugins, on the agent's side: the simulated agent goes on serving
 * other volumes while a plugin misbehaves, and `dhv plugin run` shows a person the same
 * errors the SDK gives a program.
 */

const VOLUME_ID = '6f1c2a9e-5b7d-4c3e-9a8f-0123456789ab';

let sandbox: string;
let pluginDir: string;
let volumesDir: string;
let dataDir: string;
const hostile = new HostileInstaller();

beforeEach(async () => {
  sandbox = await tempDir('hostile-agent');
  pluginDir = join(sandbox, 'plugins');
  dataDir = join(sandbox, 'data');
  volumesDir = join(dataDir, 'host_volumes');
  await mkdir(pluginDir);
  await mkdir(volumesDir, { recursive: true });
});

afterEach(async () => {
  await hostile.killLeftovers();
  await removeTempDir(sandbox);
});

/** Copies a fixture into the plugin dir under `id` and returns its path. */
const install = (fixture: string, id?: string) => hostile.install(pluginDir, fixture, id);

interface Case {
  fixture: string;
  operation: Operation;
  code: PluginErrorCode;
  /** How the plugin is named on the command line: its path, or its ID in the plugin dir. */
  byId?: boolean;
  prepare?: (file: string) => Promise<void>;
}

const CASES: Case[] = [
  { fixture: 'hang.sh', operation: 'create', code: 'PLUGIN_TIMED_OUT' },
  // A daemon left holding stdout is not an error (a real agent waits for it, then succeeds):
  // test/reliability-hostile.test.ts shows dhv killing it at the deadline and saying so.
  { fixture: 'flood-stdout.sh', operation: 'create', code: 'PLUGIN_BAD_OUTPUT' },
  { fixture: 'invalid-utf8.sh', operation: 'create', code: 'PLUGIN_BAD_OUTPUT' },
  { fixture: 'garbage.sh', operation: 'create', code: 'PLUGIN_BAD_OUTPUT' },
  { fixture: 'killed-by-signal.sh', operation: 'create', code: 'PLUGIN_FAILED' },
  { fixture: 'bytes-overflow.sh', operation: 'create', code: 'PLUGIN_BAD_OUTPUT' },
  { fixture: 'fingerprint-empty.sh', operation: 'fingerprint', code: 'PLUGIN_BAD_OUTPUT' },
  { fixture: 'missing-interpreter.sh', operation: 'create', code: 'PLUGIN_NOT_FOUND' },
  {
    fixture: 'well-behaved.sh',
    operation: 'create',
    code: 'PLUGIN_NOT_EXECUTABLE',
    byId: true,
    prepare: (file) => chmod(file, 0o644),
  },
];

describe('dhv plugin run with a hostile plugin', () => {
  it('shows a person the same typed error the SDK gives a program, and leaves no process running', async () => {
    const outcomes = await mapLimit(CASES, 3, async (c) => {
      const id = `${c.fixture.replace(/\.sh$/, '')}${c.byId ? '-by-id' : ''}`;
      const file = await install(c.fixture, id);
      await c.prepare?.(file);
      const sdkError = await (
        c.byId
          ? resolvePlugin(pluginDir, id).then((exe) => execPlugin(exe, c.operation, request(), { timeoutMs: 2_000 }))
          : execPlugin(file, c.operation, request(), { timeoutMs: 2_000 })
      ).then(
        () => undefined,
        (e: unknown) => e as PluginError,
      );
      const pluginRun = [
        'plugin',
        'run',
        c.byId ? id : file,
        c.operation,
        '--volume-id',
        VOLUME_ID,
        '--timeout',
        '2s',
        '--data-dir',
        dataDir,
        '--plugin-dir',
        pluginDir,
      ];
      const text = await runDhv(pluginRun);
      const json = await runDhv([...pluginRun, '--json']);
      return { c, file, sdkError, text, json };
    });
    for (const { c, file, sdkError, text, json } of outcomes) {
      expect(sdkError, c.fixture).toBeInstanceOf(PluginError);
      expect(sdkError!.code, c.fixture).toBe(c.code);
      expect(text.exitCode, `${c.fixture}: ${text.stderr}`).toBe(1);
      // The same reason, word for word (the volume ID differs only where the SDK was given none).
      expect(text.stderr, c.fixture).toContain(sdkError!.reason.slice(0, 60));
      expect(text.stderr, c.fixture).toContain(`code: ${c.code}`);
      expect(text.stderr, c.fixture).not.toMatch(/^\s+at .+:\d+:\d+\)?$/m);
      expect(json.exitCode, c.fixture).toBe(1);
      expect((JSON.parse(json.stderr) as { error: { code: string } }).error.code, c.fixture).toBe(c.code);
      expect(await survivors(await recordedPids(`${file}.pids`)), c.fixture).toEqual([]);
    }
  }, 120_000);

  it('refuses a plugin ID that leaves the plugin dir, runs nothing, and says "no such plugin"', async () => {
    const outside = join(sandbox, 'outside');
    await mkdir(outside);
    const target = await hostile.install(outside, 'well-behaved.sh', 'evil');
    await symlink(target, join(pluginDir, 'linked'));
    hostile.track(join(pluginDir, 'linked.pids'));

    for (const id of ['linked', '../outside/evil', target, '../bin/sh']) {
      const run = await runDhv(['volume', 'create', '-', '--data-dir', dataDir, '--plugin-dir', pluginDir], {
        input: `type = "host"\nname = "x"\nplugin_id = "${id}"\n`,
      });
      expect(run.exitCode, run.stderr).toBe(1);
      // The servers place a volume only where its plugin was fingerprinted, so these never reach a lookup.
      expect(run.stderr, id).toMatch(
        /could not place volume "x": no node meets constraints: .* 1 nodes were infeasible\nPlugin ".*" is not fingerprinted/,
      );
    }
    expect(await recordedPids(`${target}.pids`)).toEqual([]);
  }, 60_000);
});

describe('dhv stopped by a signal while a plugin hangs', () => {
  const commands = {
    'volume create': ['volume', 'create', '-'],
    'plugin run': ['plugin', 'run', 'hang', 'create'],
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it.each(Object.keys(commands))(
      `${signal}: dhv %s takes the plugin down with it, rather than leave it running with no deadline`,
      async (command) => {
        await install('hang.sh');
        const args = commands[command as keyof typeof commands];
        const child = spawn(process.execPath, [DHV_BIN, ...args, '--data-dir', dataDir, '--plugin-dir', pluginDir], {
          stdio: ['pipe', 'ignore', 'ignore'],
        });
        child.stdin.end('type = "host"\nname = "stuck"\nplugin_id = "hang"\n');
        const exited = new Promise((resolve) => child.once('close', resolve));
        const pidFile = join(pluginDir, 'hang.pids');
        // dhv's start-up alone can take many seconds on a loaded machine.
        for (const end = Date.now() + 120_000; Date.now() < end && (await recordedPids(pidFile)).length < 2;)
          await new Promise((r) => setTimeout(r, 50));
        const pids = await recordedPids(pidFile);
        expect(pids.length, 'the plugin started').toBe(2);

        child.kill(signal);
        await exited;

        expect(await survivors(pids, 3_000)).toEqual([]);
      },
      180_000,
    );
  }
});

const request = () => ({ volumesDir, volumeName: 'hostile', volumeId: VOLUME_ID, nodeId: 'node-1' });

const spec = (name: string, pluginId: string) =>
  validateVolumeSpec({ type: 'host', name, plugin_id: pluginId }, 'create');

describe('the simulated agent while a plugin hangs', () => {
  it('goes on creating, listing and deleting other volumes, and its shutdown kills the hanging plugin', async () => {
    await install('hang.sh');
    await install('well-behaved.sh', 'good');
    const agent = await Agent.open(await loadAgentConfig({ dataDir, pluginDir }));
    await agent.start();

    // hang.sh never answers its fingerprint either, so only the servers' request reaches its create.
    const stuck = {
      ID: randomUUID(),
      Name: 'stuck',
      PluginID: 'hang',
      Namespace: 'default',
      NodeID: agent.nodeId,
      RequestedCapacityMinBytes: 0n,
      RequestedCapacityMaxBytes: 0n,
      Parameters: null,
    };
    const hanging = agent.client.create(stuck).then(
      () => undefined,
      (e: unknown) => e,
    );
    const created = [];
    for (const [name, plugin] of [
      ['a', 'mkdir'],
      ['b', 'good'],
      ['c', 'mkdir'],
    ] as const)
      created.push((await agent.createVolume(spec(name, plugin))).volume);
    await agent.deleteVolume(created[2]!.ID);
    const status = await agent.status();

    expect(Object.keys(status.node.HostVolumes).sort()).toEqual(['a', 'b']);
    const pids = await recordedPids(join(pluginDir, 'hang.pids'));
    expect(pids.length, 'the hanging plugin is running').toBeGreaterThan(0);

    await agent.shutdown();

    expect(await hanging).toMatchObject({ code: 'PLUGIN_ABORTED' });
    expect(await survivors(pids)).toEqual([]);
  }, 60_000);

  it('starts with a plugin dir full of hostile plugins: the good one is fingerprinted, every other is skipped with its reason, and volumes are restored', async () => {
    for (const fixture of [
      'hang.sh',
      'daemon-holds-stdout.sh',
      'daemon-new-session.sh',
      'flood-stdout.sh',
      'garbage.sh',
      'invalid-utf8.sh',
      'killed-by-signal.sh',
      'fingerprint-empty.sh',
    ])
      await install(fixture);
    await install('well-behaved.sh', 'good');
    let agent = await Agent.open(await loadAgentConfig({ dataDir, pluginDir }));
    const volume = (await agent.createVolume(spec('kept', 'mkdir'))).volume;
    agent = await Agent.open(await loadAgentConfig({ dataDir, pluginDir }));

    const report = await agent.start();

    // A plugin that answered but left a daemon holding stdout is published, as by a real agent
    // (which would wait for the daemon first; dhv kills it at the 1 s deadline).
    expect(report.fingerprint.plugins.map((p) => p.id).sort()).toEqual([
      'daemon-holds-stdout',
      'daemon-new-session',
      'good',
      'mkdir',
    ]);
    // The fixtures' record files (written when the first create fingerprinted them) are no candidates.
    const skipped = report.fingerprint.skipped.filter((s) => !/\.(pids|ran)$/.test(s.id));
    expect(skipped.map((s) => s.id).sort()).toEqual(
      ['fingerprint-empty', 'flood-stdout', 'garbage', 'hang', 'invalid-utf8', 'killed-by-signal'].sort(),
    );
    for (const s of skipped) {
      expect(s.reason, s.id).toMatch(
        /^(error fingerprinting plugin "[^"]+": |error parsing fingerprint output as json: |plugin "[^"]+" fingerprinted without a version)/,
      );
    }
    expect(report.restored.map((v) => v.ID)).toEqual([volume.ID]);
    const pids = await hostile.recorded();
    expect(await survivors(pids)).toEqual([]);
    await agent.shutdown();
  }, 60_000);
});
