import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { execPlugin } from './exec-plugin.js';
import { PluginError, type PluginErrorCode } from './errors.js';
import { ENV } from '../protocol/variables.js';
import { PluginDir } from '../__fixtures__/plugins.js';
import { signalProcessGroup } from '../helpers/signals.js';
import { groupGone, pidWrittenTo } from '../../../../test/support/processes.js';

const VOLUME_ID = '5b8a2a5e-8f0a-4c8e-9a4f-0c7d3f2b1a99';
const request = { volumesDir: '/srv/volumes', volumeName: 'data', volumeId: VOLUME_ID, nodeId: 'node-1' };

let dir: PluginDir;
const groups: number[] = [];

beforeEach(async () => {
  dir = await PluginDir.create();
});

afterEach(async () => {
  for (const pgid of groups.splice(0)) signalProcessGroup(pgid, 'SIGKILL');
  await dir.cleanup();
});

async function failure(promise: Promise<unknown>, code: PluginErrorCode): Promise<PluginError> {
  const err = await promise.then(
    () => {
      throw new Error(`expected ${code}, but the plugin succeeded`);
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(PluginError);
  expect((err as PluginError).code).toBe(code);
  return err as PluginError;
}

/** A plugin that records its process group (its own PID: it leads its group) before doing `rest`. */
async function groupRecordingPlugin(
  name: string,
  rest: string,
): Promise<{ executable: string; pgid: () => Promise<number> }> {
  const pidFile = dir.join(`${name}.pid`);
  const executable = await dir.bash(name, `echo $$ > ${pidFile}\n${rest}`);
  return {
    executable,
    pgid: async () => {
      const pgid = await pidWrittenTo(pidFile);
      groups.push(pgid);
      return pgid;
    },
  };
}

describe('execPlugin decodes what a plugin prints', () => {
  it('fingerprints, normalizing the version as the agent stores it', async () => {
    const p = await dir.bash('fp', `echo '{"version": "v2"}'`);
    expect(await execPlugin(p, 'fingerprint', {})).toMatchObject({ version: '2.0.0', rawVersion: 'v2', stderr: '' });
  });

  it('reports the version as written by the key Go would have used (the last of duplicate keys, any case)', async () => {
    const p = await dir.bash('fp', `echo '{"version": "1", "Version": "2", "version": "3"}'`);
    expect(await execPlugin(p, 'fingerprint', {})).toMatchObject({ version: '3.0.0', rawVersion: '3' });
  });

  it('creates, with bytes as a bigint', async () => {
    const p = await dir.bash('c', `echo '{"path": "/srv/volumes/x", "bytes": 9223372036854775807}'`);
    expect(await execPlugin(p, 'create', request)).toMatchObject({
      path: '/srv/volumes/x',
      bytes: 9223372036854775807n,
    });
  });

  it('matches upper-case keys as Go does', async () => {
    const fp = await dir.bash('fp', `echo '{"VERSION": "1.0"}'`);
    expect((await execPlugin(fp, 'fingerprint', {})).version).toBe('1.0.0');
    const c = await dir.bash('c', `echo '{"PATH": "/srv/x", "Bytes": 5}'`);
    expect(await execPlugin(c, 'create', request)).toMatchObject({ path: '/srv/x', bytes: 5n });
  });

  it('deletes, ignoring stdout', async () => {
    const p = await dir.bash('d', `echo 'whatever'`);
    expect(await execPlugin(p, 'delete', request)).toMatchObject({ stdout: 'whatever\n' });
  });

  it('keeps stderr', async () => {
    const p = await dir.bash('fp', `echo 'warming up' >&2; echo '{"version": "1"}'`);
    expect((await execPlugin(p, 'fingerprint', {})).stderr).toBe('warming up\n');
  });

  it.each([
    [
      'a log line before the JSON',
      `echo starting; echo '{"path": "/x"}'`,
      "invalid character 's' looking for beginning of value",
    ],
    [
      'bytes as 5.0',
      `echo '{"path": "/x", "bytes": 5.0}'`,
      'json: cannot unmarshal number 5.0 into Go struct field HostVolumePluginCreateResponse.bytes of type int64',
    ],
    [
      'bytes as a string',
      `echo '{"path": "/x", "bytes": "5"}'`,
      'json: cannot unmarshal string into Go struct field HostVolumePluginCreateResponse.bytes of type int64',
    ],
    [
      'bytes beyond int64',
      `echo '{"path": "/x", "bytes": 9223372036854775808}'`,
      'json: cannot unmarshal number 9223372036854775808 into Go struct field HostVolumePluginCreateResponse.bytes of type int64',
    ],
    ['nothing', `true`, 'unexpected end of JSON input'],
    ['two documents', `echo '{"path": "/x"}{}'`, "invalid character '{' after top-level value"],
  ])("refuses create output with %s, in Go's words alone (the agent adds no prefix)", async (_what, body, message) => {
    const p = await dir.bash('c', body);
    const err = await failure(execPlugin(p, 'create', request), 'PLUGIN_BAD_OUTPUT');
    expect(err.nomadMessage).toBe(message);
    expect(err.message.startsWith(`${message}\n`)).toBe(true);
    expect(err.message).toMatch(/stdout was/);
  });

  it('refuses create output with no path (a real agent accepts it), saying what a real agent does', async () => {
    const p = await dir.bash('c', `echo '{"bytes": 5}'`);
    const err = await failure(execPlugin(p, 'create', request), 'PLUGIN_BAD_OUTPUT');
    expect(err.message).toMatch(/without a "path"\na real Nomad agent accepts this/);
  });

  it('refuses a fingerprint version of "one"', async () => {
    const p = await dir.bash('fp', `echo '{"version": "one"}'`);
    const err = await failure(execPlugin(p, 'fingerprint', {}), 'PLUGIN_BAD_OUTPUT');
    expect(err.nomadMessage).toBe('error parsing fingerprint output as json: malformed version: one');
  });

  it('refuses a fingerprint with no version (it would crash a real agent)', async () => {
    const p = await dir.bash('fp', `echo '{"name": "x"}'`);
    const err = await failure(execPlugin(p, 'fingerprint', {}), 'PLUGIN_BAD_OUTPUT');
    expect(err.message).toMatch(/without a version: a real Nomad agent crashes here/);
    expect(err.nomadPanic).toMatch(/nil pointer dereference/);
  });
});

describe('execPlugin reports a failed plugin like the agent does', () => {
  it('appends the plugin\'s own {"error"} message to the exit status', async () => {
    const p = await dir.bash('c', `echo 'details' >&2; echo '{"error": "disk full"}'; exit 1`);
    const err = await failure(execPlugin(p, 'create', request), 'PLUGIN_FAILED');
    expect(err.message).toBe(`error creating volume "${VOLUME_ID}" with plugin "c": exit status 1: disk full`);
    expect(err).toMatchObject({
      exitCode: 1,
      signal: null,
      pluginMessage: 'disk full',
      stderr: 'details\n',
      stdout: '{"error": "disk full"}\n',
    });
  });

  it('gives the exit status alone when stdout holds no error document', async () => {
    const p = await dir.bash('d', `echo oops; exit 3`);
    const err = await failure(execPlugin(p, 'delete', request, { pluginId: 'my-plugin' }), 'PLUGIN_FAILED');
    expect(err.message).toBe(
      `error reading plugin response when deleting volume "${VOLUME_ID}" with plugin "my-plugin": original error: exit status 3`,
    );
    const c = await dir.bash('c', `echo oops; exit 3`);
    expect((await failure(execPlugin(c, 'create', request), 'PLUGIN_FAILED')).message).toBe(
      `error creating volume "${VOLUME_ID}" with plugin "c": exit status 3`,
    );
    expect(err.pluginMessage).toBeUndefined();
  });

  it('names the signal that killed it, as Go does', async () => {
    const p = await dir.bash('c', `kill -KILL $$`);
    const err = await failure(execPlugin(p, 'create', request), 'PLUGIN_FAILED');
    expect(err.message).toMatch(/: signal: killed$/);
    expect(err).toMatchObject({ exitCode: null, signal: 'SIGKILL' });
  });

  it('reports a missing plugin', async () => {
    const err = await failure(execPlugin(dir.join('nope'), 'fingerprint', {}), 'PLUGIN_NOT_FOUND');
    expect(err.message).toBe(
      `error fingerprinting plugin "nope": fork/exec ${dir.join('nope')}: no such file or directory\n${dir.join('nope')} does not exist`,
    );
    const looked = await failure(
      execPlugin({ pluginDir: dir.path, pluginId: 'nope' }, 'fingerprint', {}),
      'PLUGIN_NOT_FOUND',
    );
    expect(looked.nomadMessage).toBe('no such plugin: "nope"');
  });

  it('reports a plugin whose interpreter line names a missing program', async () => {
    const p = await dir.file('p', '#!/nonexistent/interpreter\n', 0o755);
    await failure(execPlugin(p, 'fingerprint', {}), 'PLUGIN_NOT_FOUND');
  });

  it('reports a plugin without an execute bit', async () => {
    const p = await dir.bash('p', `echo '{"version": "1"}'`, 0o644);
    expect((await failure(execPlugin(p, 'fingerprint', {}), 'PLUGIN_NOT_EXECUTABLE')).nomadMessage).toBe(
      `error fingerprinting plugin "p": fork/exec ${p}: permission denied`,
    );
    const looked = await failure(
      execPlugin({ pluginDir: dir.path, pluginId: 'p' }, 'fingerprint', {}),
      'PLUGIN_NOT_EXECUTABLE',
    );
    expect(looked.message).toBe(`plugin not executable: "p"\n${p} has no execute bit (chmod +x it)`);
  });

  it("refuses a script with no interpreter line, as the agent's execve does (no fallback to /bin/sh)", async () => {
    const p = await dir.file('p', `echo '{"version": "1"}'\n`, 0o755);
    expect((await failure(execPlugin(p, 'fingerprint', {}), 'PLUGIN_NOT_EXECUTABLE')).message).toMatch(
      /exec format error/,
    );
  });

  it('refuses an empty executable file', async () => {
    const p = await dir.file('p', '', 0o755);
    await failure(execPlugin(p, 'fingerprint', {}), 'PLUGIN_NOT_EXECUTABLE');
  });
});

describe('execPlugin gives a plugin exactly what an agent gives it', () => {
  const dumpEnv = `process.stderr.write(JSON.stringify({ argv: process.argv.slice(2), env: process.env, cwd: process.cwd() }));
process.stdout.write(JSON.stringify({ version: '1', path: '/x' }));`;

  it("an environment of only the operation's DHV_* variables, whatever the caller's environment holds", async () => {
    process.env.DHV_TEST_LEAK = 'must not leak';
    try {
      const p = await dir.node('p', dumpEnv);
      const fp = JSON.parse((await execPlugin(p, 'fingerprint', {}, { timeoutMs: 10_000 })).stderr);
      expect(fp).toMatchObject({ argv: ['fingerprint'], env: { [ENV.operation]: 'fingerprint' } });
      expect(Object.keys(fp.env)).toEqual([ENV.operation]);
      const created = JSON.parse((await execPlugin(p, 'create', { ...request, capacityMinBytes: 2n ** 60n })).stderr);
      expect(created.argv).toEqual(['create']);
      // In the order a real agent builds it.
      expect(Object.entries(created.env)).toEqual(
        Object.entries({
          [ENV.operation]: 'create',
          [ENV.volumesDir]: '/srv/volumes',
          [ENV.pluginDir]: dir.path,
          [ENV.nodePool]: 'default',
          [ENV.namespace]: 'default',
          [ENV.volumeName]: 'data',
          [ENV.volumeId]: VOLUME_ID,
          [ENV.capacityMinBytes]: '1152921504606846976',
          [ENV.capacityMaxBytes]: '0',
          [ENV.nodeId]: 'node-1',
          [ENV.parameters]: 'null',
        }),
      );
    } finally {
      delete process.env.DHV_TEST_LEAK;
    }
  });

  it('DHV_PARAMETERS byte for byte as Go marshals it', async () => {
    const p = await dir.node('p', dumpEnv);
    const run = await execPlugin(p, 'delete', {
      ...request,
      parameters: { z: 'last', a: '<b>&"\u2028' },
      createdPath: '/srv/volumes/x',
    });
    const { env } = JSON.parse(run.stderr);
    expect(env[ENV.parameters]).toBe('{"a":"\\u003cb\\u003e\\u0026\\"\\u2028","z":"last"}');
    expect(env[ENV.createdPath]).toBe('/srv/volumes/x');
  });

  it('the working directory the caller chooses', async () => {
    const p = await dir.node('p', dumpEnv);
    expect(JSON.parse((await execPlugin(p, 'fingerprint', {}, { cwd: '/', timeoutMs: 10_000 })).stderr).cwd).toBe('/');
  });
});

describe('execPlugin stays in control of a misbehaving plugin', () => {
  it('kills a plugin that hangs, with its whole process group, at the timeout', async () => {
    const p = await groupRecordingPlugin('hang', `sleep 1000 & sleep 1000 & wait`);
    const err = await failure(execPlugin(p.executable, 'create', request, { timeoutMs: 300 }), 'PLUGIN_TIMED_OUT');
    expect(err.nomadMessage).toBe(`error creating volume "${VOLUME_ID}" with plugin "hang": signal: killed`);
    expect(err.message).toMatch(/\nthe plugin ran past its 300ms deadline and was killed/);
    expect(await groupGone(await p.pgid())).toBe(true);
  });

  it("uses the agent's 1 s fingerprint timeout by default", async () => {
    const p = await groupRecordingPlugin('slow', `sleep 1000`);
    expect((await failure(execPlugin(p.executable, 'fingerprint', {}), 'PLUGIN_TIMED_OUT')).message).toMatch(
      /past its 1s deadline/,
    );
    expect(await groupGone(await p.pgid())).toBe(true);
  });

  it('kills the whole process group when the caller aborts', async () => {
    const p = await groupRecordingPlugin('abort', `sleep 1000 & sleep 1000`);
    const controller = new AbortController();
    const run = execPlugin(p.executable, 'create', request, { signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    expect((await failure(run, 'PLUGIN_ABORTED')).message).toMatch(/cancelled/);
    expect(await groupGone(await p.pgid())).toBe(true);
  });

  it('does not start a plugin when the signal was aborted before the call', async () => {
    const p = await dir.bash('p', `/usr/bin/touch ${dir.join('ran')}; echo '{"version": "1"}'`);
    await failure(execPlugin(p, 'fingerprint', {}, { signal: AbortSignal.abort() }), 'PLUGIN_ABORTED');
    expect(existsSync(dir.join('ran'))).toBe(false);
  });

  it('reads until the pipes close, as a real agent does, and kills a child still holding them at the deadline', async () => {
    const p = await groupRecordingPlugin('fork', `sleep 1000 &\necho '{"version": "1"}'`);
    const run = await execPlugin(p.executable, 'fingerprint', {}, { timeoutMs: 1_000 });
    expect(run.version).toBe('1.0.0');
    expect(run.durationMs).toBeGreaterThanOrEqual(900);
    expect(run.warnings.join('\n')).toMatch(
      /still held its stdout or stderr at the 1s deadline: dhv killed it; a real agent waits/,
    );
    expect(await groupGone(await p.pgid())).toBe(true);
  });

  it('waits for a background child that holds the pipes for a while, as a real agent does', async () => {
    const p = await dir.bash('fork', `(sleep 0.5; echo late >&2) &\necho '{"version": "1"}'`);
    const run = await execPlugin(p, 'fingerprint', {}, { timeoutMs: 10_000 });
    expect(run).toMatchObject({ version: '1.0.0', stderr: 'late\n', warnings: [] });
  });

  it('gives the plugin pipes, so `echo >/dev/stderr` works as under a real agent', async () => {
    const p = await dir.bash(
      'pipes',
      'echo logged >/dev/stderr; fd=$(/usr/bin/readlink /proc/$$/fd/1); printf \'{"version": "1", "fd": "%s"}\' "$fd" | /usr/bin/tee /dev/stderr',
    );
    const run = await execPlugin(p, 'fingerprint', {});
    expect(run.stdout).toMatch(/^\{"version": "1", "fd": "pipe:\[[0-9]+\]"\}$/);
    expect(run.stderr).toBe(`logged\n${run.stdout}`);
  });

  it('keeps at most maxOutputBytes of a plugin that prints 100 MB, kills it, and says the output was cut', async () => {
    const p = await groupRecordingPlugin('flood', `exec /usr/bin/head -c 100000000 /dev/zero`);
    const rssBefore = process.memoryUsage().rss;
    const err = await failure(execPlugin(p.executable, 'create', request), 'PLUGIN_BAD_OUTPUT');
    // Keeping the 100 MB would show here; the 4 MiB kept and some slack do not come close.
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(48 * 1024 * 1024);
    expect(err.truncated).toBe(true);
    expect(err.stdout.length).toBe(4 * 1024 * 1024);
    expect(err.message).toMatch(
      /dhv stopped reading stdout at 4 MiB and killed the plugin\na real agent reads any amount/,
    );
    expect(await groupGone(await p.pgid())).toBe(true);
  });

  it('cuts a long stderr too, and says so, but a run whose stdout is fine still succeeds', async () => {
    const p = await dir.bash('noisy', `/usr/bin/head -c 200000 /dev/zero >&2; echo '{"version": "1"}'`);
    const run = await execPlugin(p, 'fingerprint', {}, { maxOutputBytes: 1000 });
    expect(run).toMatchObject({ version: '1.0.0', truncated: true });
    expect(run.stderr.length).toBe(1000);
  });
});
