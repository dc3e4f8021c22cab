import { execFileSync, spawn } from 'node:child_process';
import { closeSync, constants, existsSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { chmod, copyFile, link, mkdir, readdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { signalProcess } from '@dhv/sdk/host';
import { BASH_PLUGIN } from './support/awkward-plugin.js';
import { builtPlugin, removeTempDir, runDhv, skipUnless, tempDir, tool } from './support/kit.js';
import { processAlive as alive } from './support/processes.js';

/**
 * `dhv record` and `dhv replay` (issue 41, item 3): a recorder in front of a real plugin
 * answers the agent exactly as the plugin does and logs each call; `--remove` puts the
 * very same file back; a replay against a changed build names each difference and exits 1.
 */

// The tests of a file run side by side: each makes its own folder, all removed at the end.
const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => removeTempDir(d)));
});

async function newDir(): Promise<string> {
  const made = await tempDir('record-replay');
  dirs.push(made);
  return made;
}

interface Answer {
  exit: number | null;
  signal: NodeJS.Signals | null;
  stdout: Buffer;
  stderr: Buffer;
  pid: number;
}

/** Runs a plugin file as an agent does: argv `<path> <operation>`, exactly `env`, stdin /dev/null. */
function runAsAgent(path: string, operation: string, env: Record<string, string>, onStart?: (pid: number) => void) {
  return new Promise<Answer>((resolve, reject) => {
    const child = spawn(path, [operation], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    child.on('spawn', () => onStart?.(child.pid!));
    child.on('error', reject);
    child.on('close', (exit, signal) =>
      resolve({ exit, signal, stdout: Buffer.concat(out), stderr: Buffer.concat(err), pid: child.pid! }),
    );
  });
}

const VOLUME_ID = '1e1d4540-14f9-2515-8502-24d46291717d';

function createEnv(agentDir: string, volumeId = VOLUME_ID): Record<string, string> {
  return {
    DHV_OPERATION: 'create',
    DHV_VOLUMES_DIR: join(agentDir, 'volumes'),
    DHV_PLUGIN_DIR: join(agentDir, 'plugins'),
    DHV_NODE_POOL: 'default',
    DHV_NAMESPACE: 'default',
    DHV_VOLUME_NAME: 'data',
    DHV_VOLUME_ID: volumeId,
    DHV_CAPACITY_MIN_BYTES: '1048576',
    DHV_CAPACITY_MAX_BYTES: '2097152',
    DHV_NODE_ID: '9b6b4a1c-0d51-4d2c-a4a5-8f1b5d1f2e3a',
    DHV_PARAMETERS: '{"mode":"0750"}',
  };
}

function deleteEnv(agentDir: string, volumeId = VOLUME_ID): Record<string, string> {
  const c = createEnv(agentDir, volumeId);
  return {
    DHV_OPERATION: 'delete',
    DHV_VOLUMES_DIR: c.DHV_VOLUMES_DIR!,
    DHV_PLUGIN_DIR: c.DHV_PLUGIN_DIR!,
    DHV_NODE_POOL: 'default',
    DHV_CREATED_PATH: join(c.DHV_VOLUMES_DIR!, volumeId),
    DHV_NAMESPACE: 'default',
    DHV_VOLUME_NAME: 'data',
    DHV_VOLUME_ID: volumeId,
    DHV_NODE_ID: c.DHV_NODE_ID!,
    DHV_PARAMETERS: c.DHV_PARAMETERS!,
  };
}

async function pluginDir(): Promise<{ agentDir: string; plugins: string }> {
  const agentDir = await newDir();
  const plugins = join(agentDir, 'plugins');
  await mkdir(plugins);
  await mkdir(join(agentDir, 'volumes'));
  return { agentDir, plugins };
}

async function writePlugin(path: string, text: string, mode = 0o755): Promise<void> {
  await writeFile(path, text);
  await chmod(path, mode);
}

function logLines(path: string): Record<string, unknown>[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe.concurrent('dhv record', () => {
  it('stands in for dhv-mkdir: the agent gets what the plugin answers, each call is logged, and replay of the log against the same build finds no difference', async () => {
    const { agentDir, plugins } = await pluginDir();
    const plugin = join(plugins, 'dhv-mkdir');
    await copyFile(builtPlugin('dhv-mkdir'), plugin);
    const direct = await runAsAgent(plugin, 'create', createEnv(agentDir, '00000000-0000-4000-8000-000000000001'));

    const recorded = await runDhv(['record', 'dhv-mkdir', '--plugin-dir', plugins]);
    expect(recorded.stderr).toBe('');
    expect(recorded.exitCode).toBe(0);
    expect((await readFile(plugin, 'utf8')).split('\n')[1]).toContain('dhv record');

    const fingerprint = await runAsAgent(plugin, 'fingerprint', { DHV_OPERATION: 'fingerprint' });
    expect(fingerprint.stdout.toString()).toBe('{"version":"0.1.0"}\n');
    const created = await runAsAgent(plugin, 'create', createEnv(agentDir));
    expect(created.exit).toBe(0);
    expect(created.stdout.toString()).toBe(
      direct.stdout.toString().replaceAll('00000000-0000-4000-8000-000000000001', VOLUME_ID),
    );
    expect(created.stderr.toString()).toBe(
      direct.stderr.toString().replaceAll('00000000-0000-4000-8000-000000000001', VOLUME_ID),
    );
    const deleted = await runAsAgent(plugin, 'delete', deleteEnv(agentDir));
    expect(deleted.exit).toBe(0);

    const log = join(plugins, '.dhv-record', 'dhv-mkdir', 'calls.jsonl');
    const lines = logLines(log);
    expect(lines.map((l) => l.argv)).toEqual([['fingerprint'], ['create'], ['delete']]);
    expect(lines[1]).toMatchObject({
      plugin: 'dhv-mkdir',
      env: createEnv(agentDir),
      exit: 0,
      stdout: created.stdout.toString(),
      stderr: created.stderr.toString(),
    });
    expect(Object.keys(lines[1]!.env as object)).toEqual(Object.keys(createEnv(agentDir))); // in the order received
    expect(typeof lines[1]!.duration_ms).toBe('number');
    expect(Date.parse(lines[1]!.start as string)).not.toBeNaN();

    const tmp = join(agentDir, 'tmp');
    await mkdir(tmp);
    const replay = await runDhv(['replay', log, builtPlugin('dhv-mkdir'), '--json'], { env: { TMPDIR: tmp } });
    expect(replay.stderr).toBe('');
    expect(JSON.parse(replay.stdout)).toMatchObject({ calls: 3, same: 3, differ: 0, differing: [] });
    expect(replay.exitCode).toBe(0);
    expect(await readdir(tmp)).toEqual([]); // the sandbox is gone
  });

  it('passes on bytes that are not UTF-8, an exit status and death by a signal exactly, and logs them so', async () => {
    const { agentDir, plugins } = await pluginDir();
    const plugin = join(plugins, 'odd');
    await writePlugin(plugin, BASH_PLUGIN('1.0.0', 3));
    const direct = {
      create: await runAsAgent(plugin, 'create', createEnv(agentDir)),
      delete: await runAsAgent(plugin, 'delete', deleteEnv(agentDir)),
      die: await runAsAgent(plugin, 'die', {}),
    };
    expect((await runDhv(['record', plugin])).exitCode).toBe(0);
    for (const [operation, env] of [
      ['create', createEnv(agentDir)],
      ['delete', deleteEnv(agentDir)],
      ['die', {}],
    ] as const) {
      const answer = await runAsAgent(plugin, operation, env);
      const expected = direct[operation];
      expect({ ...answer, pid: 0 }, operation).toEqual({ ...expected, pid: 0 });
    }
    expect(direct.die.signal).toBe('SIGTERM');
    const lines = logLines(join(plugins, '.dhv-record', 'odd', 'calls.jsonl'));
    expect(lines[0]).toMatchObject({ exit: 0, stderr_base64: direct.create.stderr.toString('base64') });
    expect(lines[0]).not.toHaveProperty('stderr');
    expect(lines[1]).toMatchObject({ exit: 3, stderr: `cannot delete ${VOLUME_ID}\n` });
    expect(lines[2]).toMatchObject({ exit: null, signal: 'SIGTERM' });
  });

  it('still passes every call through when it cannot write its log', async () => {
    const { agentDir, plugins } = await pluginDir();
    const plugin = join(plugins, 'dhv-mkdir');
    await copyFile(builtPlugin('dhv-mkdir'), plugin);
    const log = join(agentDir, 'no-such-folder', 'calls.jsonl');
    expect((await runDhv(['record', plugin, '--log', log])).exitCode).toBe(0);
    const created = await runAsAgent(plugin, 'create', createEnv(agentDir));
    expect(created.exit).toBe(0);
    expect(JSON.parse(created.stdout.toString())).toEqual({
      path: join(agentDir, 'volumes', VOLUME_ID),
      bytes: 2097152,
    });
    expect(existsSync(join(agentDir, 'volumes', VOLUME_ID))).toBe(true);
    expect(existsSync(log)).toBe(false);
  });

  /** A recorded plugin called as the agent does, waiting at its gate: the recorder's and the plugin's pids. */
  /** A recorded plugin's `wait` call under way; `env` given to the recorder beside the volumes dir. */
  async function recordedCallWaiting(env: (agentDir: string) => Promise<Record<string, string>> = async () => ({})) {
    const { agentDir, plugins } = await pluginDir();
    const plugin = join(plugins, 'odd');
    await writePlugin(plugin, BASH_PLUGIN('1.0.0', 3));
    expect((await runDhv(['record', plugin])).exitCode).toBe(0);
    const volumes = join(agentDir, 'volumes');
    makeGate(join(volumes, 'gate'));
    let recorderPid = 0;
    const answer = runAsAgent(
      plugin,
      'wait',
      { DHV_VOLUMES_DIR: volumes, ...(await env(agentDir)) },
      (pid) => (recorderPid = pid),
    );
    const pluginPid = Number(await waitForFile(join(volumes, 'pid')));
    return { volumes, answer, recorderPid, pluginPid };
  }

  it('forwards a signal to the plugin and exits as the plugin did', async () => {
    const { volumes, answer, recorderPid, pluginPid } = await recordedCallWaiting();
    expect(pluginPid).not.toBe(recorderPid);
    signalProcess(recorderPid, 'SIGTERM'); // the recorder alone, as a user's kill would
    const result = await answer;
    expect(result.exit).toBe(7);
    expect(readFileSync(join(volumes, 'signals'), 'utf8')).toBe('got TERM\n');
    expect(alive(pluginPid)).toBe(false);
  });

  it('forwards a signal that comes before it could take a step after starting the plugin', async () => {
    // A loaded machine can run the plugin, and a user's kill can come, before the recorder's
    // next step: a preload holds the recorder 1.5 s right after it starts the plugin.
    const { volumes, answer, recorderPid, pluginPid } = await recordedCallWaiting(async (agentDir) => {
      const preload = join(agentDir, 'hold-after-spawn.cjs');
      await writeFile(
        preload,
        `const cp = require('node:child_process');\nconst spawn = cp.spawn;\ncp.spawn = function (...args) {\n  const child = spawn.apply(this, args);\n  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1500);\n  return child;\n};\n`,
      );
      return { NODE_OPTIONS: `--require ${preload}` };
    });
    signalProcess(recorderPid, 'SIGTERM');
    const result = await answer;
    expect(result).toMatchObject({ exit: 7, signal: null });
    expect(readFileSync(join(volumes, 'signals'), 'utf8')).toBe('got TERM\n');
    expect(alive(pluginPid)).toBe(false);
  });

  it.skipIf(skipUnless('a recorder killed alone', tool('setpriv', 'util-linux')))(
    'takes the plugin with it when it is killed alone (Nomad kills only the process it started)',
    async () => {
      const { volumes, answer, recorderPid, pluginPid } = await recordedCallWaiting();
      try {
        signalProcess(recorderPid, 'SIGKILL');
        expect((await answer).signal).toBe('SIGKILL');
        await waitUntil(() => !alive(pluginPid));
      } finally {
        releaseGate(join(volumes, 'gate')); // the plugin's own helper, which outlives it as under a real agent
      }
    },
  );
});

describe.concurrent('dhv record --remove', () => {
  it('puts back the very same file: bytes, mode, owner, inode and times', async () => {
    const { agentDir, plugins } = await pluginDir();
    const plugin = join(plugins, 'odd');
    await writePlugin(plugin, BASH_PLUGIN('1.0.0', 3), 0o750);
    const before = await stat(plugin);
    const bytes = await readFile(plugin);
    const log = join(agentDir, 'calls.jsonl');
    expect((await runDhv(['record', plugin, '--log', log])).exitCode).toBe(0);
    expect((await stat(plugin)).ino).not.toBe(before.ino);
    expect((await stat(plugin)).mode).toBe(before.mode);
    await runAsAgent(plugin, 'fingerprint', { DHV_OPERATION: 'fingerprint' });

    const removed = await runDhv(['record', '--remove', plugin, '--json']);
    expect(removed.exitCode).toBe(0);
    expect(JSON.parse(removed.stdout)).toMatchObject({ outcome: 'restored', log });
    const after = await stat(plugin);
    expect(await readFile(plugin)).toEqual(bytes);
    expect({ ino: after.ino, mode: after.mode, uid: after.uid, gid: after.gid, mtimeMs: after.mtimeMs }).toEqual({
      ino: before.ino,
      mode: before.mode,
      uid: before.uid,
      gid: before.gid,
      mtimeMs: before.mtimeMs,
    });
    expect(await readdir(plugins)).toEqual(['odd']); // no record folder left
    expect(logLines(log)).toHaveLength(1); // the log stays

    const again = await runDhv(['record', '--remove', plugin]);
    expect(again.exitCode).toBe(0);
    expect(again.stdout).toContain('is not being recorded');
  });

  it('refuses, changing nothing, when something replaced the recorder since', async () => {
    const { plugins } = await pluginDir();
    const plugin = join(plugins, 'odd');
    await writePlugin(plugin, BASH_PLUGIN('1.0.0', 3));
    expect((await runDhv(['record', plugin])).exitCode).toBe(0);
    const kept = join(plugins, '.dhv-record', 'odd', 'odd');
    await writePlugin(`${plugin}.new`, BASH_PLUGIN('2.0.0', 0));
    await rename(`${plugin}.new`, plugin); // a package upgrade
    const removed = await runDhv(['record', '--remove', plugin, '--json']);
    expect(removed.exitCode).toBe(1);
    expect(JSON.parse(removed.stderr).error).toMatchObject({ code: 'RECORD_STATE_CHANGED' });
    expect(await readFile(plugin, 'utf8')).toBe(BASH_PLUGIN('2.0.0', 0));
    expect(await readFile(kept, 'utf8')).toBe(BASH_PLUGIN('1.0.0', 3));
  });

  it('refuses to record twice, and finishes what a record killed before its last rename left', async () => {
    const { plugins } = await pluginDir();
    const plugin = join(plugins, 'odd');
    await writePlugin(plugin, BASH_PLUGIN('1.0.0', 3));
    expect((await runDhv(['record', plugin])).exitCode).toBe(0);
    const twice = await runDhv(['record', plugin]);
    expect(twice.exitCode).toBe(1);
    expect(twice.stderr).toContain('already being recorded');
    expect((await runDhv(['record', '--remove', plugin])).exitCode).toBe(0);

    // A record killed after linking the plugin into its folder: the plugin never left its path.
    const folder = join(plugins, '.dhv-record', 'odd');
    await mkdir(folder, { recursive: true });
    await link(plugin, join(folder, 'odd'));
    const resumed = await runDhv(['record', plugin]);
    expect(resumed.exitCode).toBe(0);
    expect(resumed.stdout).toContain('left by a dhv record that did not finish');
    expect((await runDhv(['record', '--remove', plugin])).exitCode).toBe(0);
    expect(await readFile(plugin, 'utf8')).toBe(BASH_PLUGIN('1.0.0', 3));
  });
});

describe.concurrent('dhv record --remove, killed half-way before', () => {
  it('finishes a --remove killed after its rename: the plugin stays, the state goes', async () => {
    const { agentDir, plugins } = await pluginDir();
    const plugin = join(plugins, 'odd');
    await writePlugin(plugin, BASH_PLUGIN('1.0.0', 3));
    const before = await stat(plugin);
    expect((await runDhv(['record', plugin, '--log', join(agentDir, 'calls.jsonl')])).exitCode).toBe(0);
    await rename(join(plugins, '.dhv-record', 'odd', 'odd'), plugin); // the rename of --remove, then killed

    const removed = await runDhv(['record', '--remove', plugin, '--json']);
    expect(removed.exitCode).toBe(0);
    expect(JSON.parse(removed.stdout)).toMatchObject({ outcome: 'finished-interrupted' });
    expect((await stat(plugin)).ino).toBe(before.ino);
    expect(await readdir(plugins)).toEqual(['odd']);
  });
});

describe.concurrent('dhv replay', () => {
  it('names every call a changed build answers differently, and exits 1', async () => {
    const { agentDir, plugins } = await pluginDir();
    const plugin = join(plugins, 'odd');
    await writePlugin(plugin, BASH_PLUGIN('1.0.0', 3));
    const log = join(agentDir, 'calls.jsonl');
    expect((await runDhv(['record', plugin, '--log', log])).exitCode).toBe(0);
    await runAsAgent(plugin, 'fingerprint', { DHV_OPERATION: 'fingerprint' });
    await runAsAgent(plugin, 'create', createEnv(agentDir));
    await runAsAgent(plugin, 'delete', deleteEnv(agentDir));

    const same = join(agentDir, 'same');
    await writePlugin(same, BASH_PLUGIN('1.0.0', 3));
    const unchanged = await runDhv(['replay', log, same]);
    expect(unchanged.stdout).toContain('3 same, 0 differ');
    expect(unchanged.exitCode).toBe(0);

    const changed = join(agentDir, 'changed');
    await writePlugin(changed, BASH_PLUGIN('1.1.0', 0));
    const replay = await runDhv(['replay', log, changed, '-json', '--id', 'odd']);
    expect(replay.exitCode).toBe(1);
    const report = JSON.parse(replay.stdout) as {
      differ: number;
      differing: { index: number; differences: { field: string }[] }[];
    };
    expect(report.differ).toBe(2);
    expect(report.differing.map((d) => [d.index, d.differences.map((x) => x.field)])).toEqual([
      [1, ['stdout', 'version']],
      [3, ['exit', 'error']],
    ]);
    const text = await runDhv(['replay', log, changed]);
    expect(text.exitCode).toBe(1);
    expect(text.stdout).toContain('3 call(s) of odd');
    expect(text.stdout).toContain('Call 3 (line 3): delete');
    expect(text.stdout).toContain('recorded: "exit 3"');
  });

  it("replays a real-agent scenario's plugin_calls, placeholders mapped", async () => {
    const dir = await newDir();
    const scenario = {
      scenario: 'one create',
      steps: [
        {
          run: '$NOMAD volume create mk1.hcl',
          plugin_calls: [
            {
              plugin: 'other',
              argv: ['fingerprint'],
              env: { DHV_OPERATION: 'fingerprint' },
              exit: 0,
              stdout: '{"version":"1"}\n',
              stderr: '',
            },
            {
              plugin: 'dhv-mkdir',
              argv: ['create'],
              env: {
                ...createEnv('<ROOT>', '<VOL1>'),
                DHV_NODE_ID: '<NODE>',
              },
              exit: 0,
              stdout: '{"path":"<ROOT>/volumes/<VOL1>","bytes":2097152}\n',
              stderr: 'created <ROOT>/volumes/<VOL1> (mode 0750)\n',
            },
          ],
        },
      ],
    };
    const file = join(dir, 'scenario.json');
    await writeFile(file, JSON.stringify(scenario));
    const replay = await runDhv(['replay', file, builtPlugin('dhv-mkdir'), '--json']);
    expect(replay.stderr).toBe('');
    expect(JSON.parse(replay.stdout)).toMatchObject({
      pluginId: 'dhv-mkdir',
      calls: 1,
      same: 1,
      otherPlugins: { other: 1 },
    });
    expect(replay.exitCode).toBe(0);
  });

  it('stopped by SIGTERM in the middle of a call, kills the plugin, removes its sandbox and exits 143', async () => {
    const dir = await newDir();
    const gate = join(dir, 'gate');
    makeGate(gate);
    const plugin = join(dir, 'slow');
    await writePlugin(
      plugin,
      `#!/bin/bash\n/bin/mkdir -p "$DHV_VOLUMES_DIR/$DHV_VOLUME_ID"\necho $$ > ${dir}/started\nread -t 60 _ < ${gate}\n`,
    );
    const trace = join(dir, 'calls.jsonl');
    const call = { plugin: 'slow', argv: ['create'], env: createEnv('/opt/nomad'), exit: 0, stdout: '', stderr: '' };
    await writeFile(trace, `${JSON.stringify(call)}\n`);
    const tmp = join(dir, 'tmp');
    await mkdir(tmp);
    const replay = runDhv(['replay', trace, plugin], { env: { TMPDIR: tmp } });
    try {
      const pluginPid = Number(await waitForFile(join(dir, 'started')));
      const [sandbox] = await readdir(tmp);
      expect(existsSync(join(tmp, sandbox!, 'agent', 'volumes', VOLUME_ID))).toBe(true);
      const dhvPid = Number(readFileSync(`/proc/${pluginPid}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
      signalProcess(dhvPid, 'SIGTERM');
      const result = await replay;
      expect(result.exitCode).toBe(143);
      expect(alive(pluginPid)).toBe(false);
      expect(await readdir(tmp)).toEqual([]);
    } finally {
      releaseGate(gate);
      await replay;
    }
  });

  it('killed with kill -9 in the middle of a call: the next dhv command kills its plugin and removes its sandbox, and says so', async () => {
    const dir = await newDir();
    const gate = join(dir, 'gate');
    makeGate(gate);
    const plugin = join(dir, 'slow');
    await writePlugin(plugin, `#!/bin/bash\necho $$ > ${dir}/started\nread -t 60 _ < ${gate}\n`);
    const trace = join(dir, 'calls.jsonl');
    const call = { plugin: 'slow', argv: ['create'], env: createEnv('/opt/nomad'), exit: 0, stdout: '', stderr: '' };
    await writeFile(trace, `${JSON.stringify(call)}\n`);
    const tmp = join(dir, 'tmp');
    const journal = join(dir, 'journal');
    await mkdir(tmp);
    const env = { TMPDIR: tmp, DHV_CLEANUP_JOURNAL: journal };
    const replay = runDhv(['replay', trace, plugin], { env });
    try {
      const pluginPid = Number(await waitForFile(join(dir, 'started')));
      const [sandbox] = await readdir(tmp);
      const dhvPid = Number(readFileSync(`/proc/${pluginPid}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
      // Its process group is journalled just after it starts (no ID exists before): kill after that.
      await waitUntil(() =>
        readdirSync(journal).some((f) => readFileSync(join(journal, f), 'utf8').includes(`"pgid":${pluginPid}`)),
      );
      signalProcess(dhvPid, 'SIGKILL');
      expect((await replay).signal).toBe('SIGKILL');
      expect(alive(pluginPid)).toBe(true); // its own process group: a kill -9 of dhv cannot reach it

      const next = await runDhv(['version'], { env });
      expect(next.exitCode).toBe(0);
      expect(next.stderr).toMatch(
        new RegExp(
          `^dhv: finished the cleanup of \`.*replay ${trace} ${plugin}\` \\(process ${dhvPid}, killed before it could\\): killed process group ${pluginPid}, removed ${join(tmp, sandbox!)}$`,
          'm',
        ),
      );
      expect(alive(pluginPid)).toBe(false);
      expect(await readdir(tmp)).toEqual([]);
    } finally {
      releaseGate(gate);
      await replay;
    }
  });

  it('refuses a trace that is not one, as a usage mistake', async () => {
    const dir = await newDir();
    const file = join(dir, 'calls.jsonl');
    await writeFile(file, '{"plugin": "x"}\n{"plugin": "x", "argv": []}\n');
    const replay = await runDhv(['replay', file, builtPlugin('dhv-mkdir')]);
    expect(replay.exitCode).toBe(2);
    expect(replay.stderr).toContain('line 1: not a recorded plugin call');

    const missing = await runDhv(['replay', file, join(dir, 'no-such-plugin'), '--json']);
    expect(missing.exitCode).toBe(2);
    expect(JSON.parse(missing.stderr).error).toMatchObject({ code: 'REPLAY_NO_PLUGIN' });
  });
});

function makeGate(path: string): void {
  execFileSync('/usr/bin/mkfifo', [path]);
}

/** Lets a reader blocked on the gate go (it then reads end of file), if one is there. */
function releaseGate(path: string): void {
  try {
    closeSync(openSync(path, constants.O_WRONLY | constants.O_NONBLOCK));
  } catch {
    // no reader waiting
  }
}

async function waitForFile(path: string): Promise<string> {
  await waitUntil(() => existsSync(path) && readFileSync(path, 'utf8').endsWith('\n'));
  return readFileSync(path, 'utf8').trim();
}

/** Polls a condition that the test's own actions make true (never a timing assertion). */
async function waitUntil(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 3000; i++) {
    if (condition()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('condition never held');
}
