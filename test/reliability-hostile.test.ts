import { chmod, mkdir, rm, stat, symlink } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PluginError, discoverPlugins, execPlugin, resolvePlugin, type PluginErrorCode } from '@dhv/sdk/client';
import type { Operation } from '@dhv/sdk/plugin';
import { HostileInstaller } from './support/hostile-installer.js';
import { recordedPids, survivors } from './support/processes.js';
import { tempDir, removeTempDir } from './support/kit.js';

/**
 * Hostile plugins: whatever a plugin does, the client stays in control. Each
 * call returns within its timeout plus one second, memory stays bounded, no process of
 * the plugin survives, and the error is typed and says what happened.
 */

const TIMEOUT_MS = 2_000;
/** How late a deadline may land and still count as kept: enough for a machine loaded well past its core count. */
const SLACK_MS = 5_000;
/** A 1 GiB flood kept whole would grow the heap by a gigabyte; the client keeps 4 MiB. */
const MEMORY_BOUND_BYTES = 128 * 1024 * 1024;

const VOLUME_ID = '6f1c2a9e-5b7d-4c3e-9a8f-0123456789ab';

let sandbox: string;
let pluginDir: string;
let volumesDir: string;
const hostile = new HostileInstaller();

beforeEach(async () => {
  sandbox = await tempDir('hostile');
  pluginDir = join(sandbox, 'plugins');
  volumesDir = join(sandbox, 'volumes');
  await mkdir(pluginDir);
  await mkdir(volumesDir);
});

afterEach(async () => {
  // A failed assertion must not leave a hanging fixture behind.
  await hostile.killLeftovers();
  await removeTempDir(sandbox);
});

/** Copies a fixture into the plugin dir under `id` and returns its path. */
const install = (fixture: string, id?: string) => hostile.install(pluginDir, fixture, id);

const request = () => ({ volumesDir, volumeName: 'hostile', volumeId: VOLUME_ID, nodeId: 'node-1' });

interface Outcome {
  error: PluginError;
  elapsedMs: number;
  rssGrowth: number;
}

async function runExpectingFailure(
  executable: string,
  operation: Operation,
  options: { signal?: AbortSignal } = {},
): Promise<Outcome> {
  global.gc?.();
  const rssBefore = process.memoryUsage().rss;
  const started = performance.now();
  let caught: unknown;
  try {
    await execPlugin(executable, operation, request() as never, { timeoutMs: TIMEOUT_MS, ...options });
  } catch (err) {
    caught = err;
  }
  const elapsedMs = performance.now() - started;
  const rssGrowth = process.memoryUsage().rss - rssBefore;
  expect(caught, 'the call must fail').toBeInstanceOf(PluginError);
  return { error: caught as PluginError, elapsedMs, rssGrowth };
}

interface HostileCase {
  fixture: string;
  does: string;
  operation: Operation;
  code: PluginErrorCode;
  says: RegExp;
  check?: (error: PluginError) => void;
  /** False for a fixture that never starts, so has no PIDs to record. */
  starts?: false;
}

const CASES: HostileCase[] = [
  {
    fixture: 'hang.sh',
    does: 'hangs forever',
    operation: 'create',
    code: 'PLUGIN_TIMED_OUT',
    says: /signal: killed\nthe plugin ran past its 2s deadline and was killed/,
  },
  {
    fixture: 'flood-stdout.sh',
    does: 'prints 1 GiB to stdout',
    operation: 'create',
    code: 'PLUGIN_BAD_OUTPUT',
    says: /dhv stopped reading stdout at 4 MiB and killed the plugin/,
    check: (e) => expect(e.truncated).toBe(true),
  },
  {
    fixture: 'flood-stderr.sh',
    does: 'prints to stderr without end',
    operation: 'create',
    code: 'PLUGIN_TIMED_OUT',
    says: /past its 2s deadline/,
    check: (e) => expect(e.stderr.length).toBeLessThanOrEqual(4 * 1024 * 1024),
  },
  {
    fixture: 'invalid-utf8.sh',
    does: 'prints invalid UTF-8',
    operation: 'create',
    code: 'PLUGIN_BAD_OUTPUT',
    says: /^invalid character/,
  },
  {
    fixture: 'invalid-utf8.sh',
    does: 'prints invalid UTF-8 to fingerprint',
    operation: 'fingerprint',
    code: 'PLUGIN_BAD_OUTPUT',
    says: /^error parsing fingerprint output as json: invalid character/,
  },
  {
    fixture: 'garbage.sh',
    does: 'exits 0 with garbage',
    operation: 'create',
    code: 'PLUGIN_BAD_OUTPUT',
    says: /^invalid character 'O' looking for beginning of value/,
  },
  {
    fixture: 'killed-by-signal.sh',
    does: 'dies by a signal',
    operation: 'create',
    code: 'PLUGIN_FAILED',
    says: /signal: segmentation fault/,
    check: (e) => expect(e.signal).toBe('SIGSEGV'),
  },
  {
    fixture: 'bytes-overflow.sh',
    does: 'reports bytes beyond 2^63',
    operation: 'create',
    code: 'PLUGIN_BAD_OUTPUT',
    says: /cannot unmarshal number 9223372036854775808 into Go struct field HostVolumePluginCreateResponse.bytes of type int64/,
  },
  {
    fixture: 'fingerprint-empty.sh',
    does: 'answers fingerprint with {}',
    operation: 'fingerprint',
    code: 'PLUGIN_BAD_OUTPUT',
    says: /without a version: a real Nomad agent crashes here/,
  },
  {
    fixture: 'missing-interpreter.sh',
    does: 'names an interpreter that does not exist',
    operation: 'create',
    code: 'PLUGIN_NOT_FOUND',
    says: /fork\/exec .*: no such file or directory\n.*its #! line names \/nonexistent/,
    starts: false,
  },
];

describe('a hostile plugin run through execPlugin', () => {
  it.each(CASES)(
    '$does ($operation): $code, in time, bounded memory, nothing left running',
    async ({ fixture, operation, code, says, check, starts }) => {
      const executable = await install(fixture);

      const { error, elapsedMs, rssGrowth } = await runExpectingFailure(executable, operation);

      console.log(
        `${fixture} ${operation}: ${error.code} after ${elapsedMs.toFixed(0)} ms, rss ${rssGrowth >= 0 ? '+' : ''}${(rssGrowth / 1024 / 1024).toFixed(1)} MiB`,
      );
      expect(error.code).toBe(code);
      expect(error.message).toMatch(says);
      expect(error.operation).toBe(operation);
      check?.(error);
      expect(elapsedMs).toBeLessThan(TIMEOUT_MS + SLACK_MS);
      expect(rssGrowth).toBeLessThan(MEMORY_BOUND_BYTES);
      const pids = await recordedPids(`${executable}.pids`);
      if (starts !== false) expect(pids.length, 'the fixture recorded its PIDs').toBeGreaterThan(0);
      expect(await survivors(pids), 'processes of the plugin still running').toEqual([]);
    },
  );

  it.each([
    ['daemon-holds-stdout.sh', 'forks a daemon that keeps stdout open, and exits'],
    ['daemon-new-session.sh', 'forks a daemon in a new session that keeps stdout open, and exits'],
  ])(
    '%s %s: read until the deadline as a real agent reads, then the daemon is killed and the run succeeds, saying so',
    async (fixture) => {
      const executable = await install(fixture);
      const started = performance.now();
      const run = await execPlugin(executable, 'create', request() as never, { timeoutMs: TIMEOUT_MS });
      const elapsedMs = performance.now() - started;
      expect(run.path).toBe(join(volumesDir, VOLUME_ID));
      expect(run.warnings.join('\n')).toMatch(/a real agent waits for that process as long as it lives/);
      expect(elapsedMs).toBeLessThan(TIMEOUT_MS + SLACK_MS + 2_000);
      expect(
        await survivors(await recordedPids(`${executable}.pids`)),
        'processes of the plugin still running',
      ).toEqual([]);
    },
  );

  it('hangs, and the caller aborts: PLUGIN_ABORTED at once, the whole group killed', async () => {
    const executable = await install('hang.sh');
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);

    const { error, elapsedMs } = await runExpectingFailure(executable, 'create', { signal: controller.signal });

    expect(error.code).toBe('PLUGIN_ABORTED');
    expect(error.message).toMatch(/cancelled/);
    expect(elapsedMs).toBeLessThan(TIMEOUT_MS);
    expect(await survivors(await recordedPids(`${executable}.pids`))).toEqual([]);
  });
});

describe('a plugin that is not a runnable file inside the plugin dir', () => {
  it('is not executable: PLUGIN_NOT_EXECUTABLE from resolvePlugin and from execPlugin, nothing ran', async () => {
    const file = await install('well-behaved.sh', 'not-executable');
    await chmod(file, 0o644);

    await expect(resolvePlugin(pluginDir, 'not-executable')).rejects.toMatchObject({
      code: 'PLUGIN_NOT_EXECUTABLE',
      message: expect.stringMatching(/no execute bit/),
    });
    const { error } = await runExpectingFailure(file, 'create');
    expect(error.code).toBe('PLUGIN_NOT_EXECUTABLE');
    expect(error.message).toMatch(/chmod \+x/);
    expect(existsSync(`${file}.ran`)).toBe(false);
    const discovery = await discoverPlugins(pluginDir);
    expect(discovery.plugins).toEqual([]);
    // No execute bit: not a candidate, never run and never logged, as by a real agent.
    expect(discovery.skipped).toEqual([]);
  });

  it('is a directory: not a candidate at discovery, PLUGIN_NOT_EXECUTABLE when named', async () => {
    await mkdir(join(pluginDir, 'a-directory'), { mode: 0o755 });

    await expect(resolvePlugin(pluginDir, 'a-directory')).rejects.toMatchObject({
      code: 'PLUGIN_NOT_EXECUTABLE',
      message: expect.stringMatching(/is a directory/),
    });
    const { error } = await runExpectingFailure(join(pluginDir, 'a-directory'), 'create');
    expect(error.code).toBe('PLUGIN_NOT_EXECUTABLE');
    expect(await discoverPlugins(pluginDir)).toEqual({ plugins: [], skipped: [], logs: [] });
  });

  it('is a symlink out of the plugin dir: "no such plugin", and the target never runs', async () => {
    const outside = join(sandbox, 'outside');
    await mkdir(outside);
    const target = await hostile.install(outside, 'well-behaved.sh', 'evil');
    hostile.track(join(pluginDir, 'evil.pids'));
    await symlink(target, join(pluginDir, 'evil'));

    await expect(resolvePlugin(pluginDir, 'evil')).rejects.toMatchObject({
      code: 'PLUGIN_NOT_FOUND',
      message: expect.stringMatching(/^no such plugin: "evil"\n.* is a symlink to the absolute path /),
    });
    const discovery = await discoverPlugins(pluginDir);
    expect(discovery.plugins).toEqual([]);
    expect(discovery.skipped).toMatchObject([{ id: 'evil', error: { code: 'PLUGIN_NOT_FOUND' } }]);
    expect(existsSync(`${target}.ran`), 'the target outside the plugin dir ran').toBe(false);
  });

  it('is deleted between discovery and execution: PLUGIN_NOT_FOUND, not a crash', async () => {
    await install('well-behaved.sh', 'vanishing');
    const discovery = await discoverPlugins(pluginDir);
    expect(discovery.plugins.map((p) => p.id)).toEqual(['vanishing']);
    const { executable } = discovery.plugins[0]!;
    await rm(executable);

    await expect(resolvePlugin(pluginDir, 'vanishing')).rejects.toMatchObject({ code: 'PLUGIN_NOT_FOUND' });
    const { error, elapsedMs } = await runExpectingFailure(executable, 'create');
    expect(error.code).toBe('PLUGIN_NOT_FOUND');
    expect(error.message).toMatch(/does not exist/);
    expect(elapsedMs).toBeLessThan(TIMEOUT_MS + SLACK_MS);
  });
});

describe('discovery of a plugin dir full of hostile plugins', () => {
  it('returns within the 1 s fingerprint budget plus one second, keeps the good plugin, skips every other with a reason, and leaves nothing running', async () => {
    const fixtures = CASES.map((c) => c.fixture).filter((f, i, all) => all.indexOf(f) === i);
    for (const fixture of fixtures) await install(fixture);
    await install('well-behaved.sh', 'good');
    await mkdir(join(pluginDir, 'a-directory'));

    const started = performance.now();
    const discovery = await discoverPlugins(pluginDir);
    const elapsedMs = performance.now() - started;

    expect(elapsedMs).toBeLessThan(1_000 + SLACK_MS);
    expect(discovery.plugins).toMatchObject([{ id: 'good', version: '1.0.0' }]);
    expect(discovery.skipped.map((s) => s.id).sort()).toEqual(fixtures.map((f) => f.replace(/\.sh$/, '')).sort());
    for (const skipped of discovery.skipped) {
      expect(skipped.error, `${skipped.id} is skipped with a typed error`).toBeInstanceOf(PluginError);
      expect(skipped.reason).toMatch(
        /^(error fingerprinting plugin "[^"]+": .{10,}|error parsing fingerprint output as json: |plugin "[^"]+" fingerprinted without a version)/,
      );
    }
    const pids = await hostile.recorded();
    expect(await survivors(pids)).toEqual([]);
    expect((await stat(volumesDir)).isDirectory()).toBe(true);
  });
});
