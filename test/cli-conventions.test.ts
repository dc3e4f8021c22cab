import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { seedVolumes } from '@dhv/harness/testing';
import { COMMANDS } from '../packages/harness/src/commands/index.js';
import { DHV_BIN, runDhv, runDhvInOneProcess, tempDir, removeTempDir } from './support/kit.js';

/** The conventions of an oclif CLI a user expects of dhv: help, version, typos, flags. */

let dataDir: string;
beforeEach(async () => {
  dataDir = await tempDir('cli-conventions');
});
afterEach(async () => {
  await removeTempDir(dataDir);
});

const dhv = (...args: string[]) => runDhv(args, { env: { DHV_DATA_DIR: dataDir } });
const VERSION_LINE = /^@dhv\/harness\/0\.1\.0 linux-\w+ node-v\d+\.\d+\.\d+\n$/;

describe('dhv help', () => {
  it('lists the topics and commands, and shows the help of one command', async () => {
    const root = await dhv('help');
    expect(root.exitCode, root.stderr).toBe(0);
    expect(root.stdout).toMatch(/^TOPICS\n[\s\S]*\bvolume\b/m);
    expect(root.stdout).toMatch(/^COMMANDS\n[\s\S]*\bcheck\b/m);

    const one = await dhv('help', 'volume', 'create');
    expect(one.exitCode, one.stderr).toBe(0);
    expect(one.stdout).toMatch(/^USAGE\n\s+\$ dhv volume create SPEC/m);
    expect(one.stdout).toBe((await dhv('volume', 'create', '--help')).stdout);
  });

  it('answers -h, -help, --help and help <command> alike, for dhv and for every command', async () => {
    const root = await dhv('--help');
    expect(root.exitCode, root.stderr).toBe(0);
    for (const spelling of [['-h'], ['-help'], ['help']]) {
      const run = await dhv(...spelling);
      expect(run.exitCode, `dhv ${spelling.join(' ')}: ${run.stderr}`).toBe(0);
      expect(run.stdout, `dhv ${spelling.join(' ')}`).toBe(root.stdout);
    }
    // Every command's help, asked four ways: 4 runs a command, all of them in one process (runDhvInOneProcess).
    const ids = Object.keys(COMMANDS).filter((id) => id !== 'help');
    const spellings = (words: string[]) => [
      ['help', ...words],
      ...['-h', '-help', '--help'].map((flag) => [...words, flag]),
    ];
    const asked = ids.flatMap((id) => spellings(id.split(':')));
    const runs = await runDhvInOneProcess(asked, { env: { DHV_DATA_DIR: dataDir } });
    // One of them, as its own process too: the runs in one process print what dhv does.
    const own = await dhv('volume', 'create', '-help');
    expect(runs[asked.findIndex((args) => args.join(' ') === 'volume create -help')]).toEqual({
      exitCode: own.exitCode,
      stdout: own.stdout,
      stderr: own.stderr,
    });
    for (const [i, id] of ids.entries()) {
      const words = id.split(':');
      const [help, ...flags] = runs.slice(i * 4, i * 4 + 4);
      expect(help!.exitCode, `dhv help ${words.join(' ')}: ${help!.stderr}`).toBe(0);
      expect(help!.stdout).toMatch(new RegExp(`^USAGE\\n\\s+\\$ dhv ${words.join(' ')}\\b`, 'm'));
      for (const [j, run] of flags.entries()) {
        const flag = asked[i * 4 + j + 1]!.at(-1);
        expect(run.exitCode, `dhv ${words.join(' ')} ${flag}: ${run.stderr}`).toBe(0);
        expect(run.stdout, `dhv ${words.join(' ')} ${flag}`).toBe(help!.stdout);
      }
    }
  });

  it('answers a help for a command that does not exist as a typo, with a suggestion and exit 2', async () => {
    const run = await dhv('help', 'volum');
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toMatch(/^Error: volum is not a dhv command\.\nDid you mean `dhv volume`\?/);
  });
});

describe('dhv version', () => {
  it('prints the same line for version, --version and -v', async () => {
    for (const args of [['version'], ['--version'], ['-v']]) {
      const run = await dhv(...args);
      expect(run.exitCode, args.join(' ')).toBe(0);
      expect(run.stdout, args.join(' ')).toMatch(VERSION_LINE);
    }
  });

  it('gives the version as JSON with --json', async () => {
    const run = await dhv('version', '--json');
    expect(run.exitCode, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({
      apiVersion: 'dhv/v1',
      kind: 'Version',
      name: '@dhv/harness',
      version: '0.1.0',
      architecture: expect.stringMatching(/^linux-/),
      nodeVersion: process.version,
    });
  });
});

describe('a long output', () => {
  it('reaches a reader slower than dhv whole, before dhv exits', async () => {
    const volumes = Array.from({ length: 1_500 }, (_, i) => ({ id: randomUUID(), name: `v${i}`, pluginId: 'mkdir' }));
    await seedVolumes(dataDir, volumes);
    const child = spawn(process.execPath, [DHV_BIN, 'volume', 'status', '-json'], {
      env: { ...process.env, DHV_DATA_DIR: dataDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((done) => child.once('close', done));
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    // Nothing is read for a while: the pipe fills, and dhv has to wait for its reader.
    await sleep(1_000);
    const chunks: Buffer[] = [];
    for await (const chunk of child.stdout) chunks.push(chunk as Buffer);
    expect(await exited, stderr).toBe(0);
    const listed = JSON.parse(Buffer.concat(chunks).toString()) as Array<{ ID: string }>;
    expect(listed.map((v) => v.ID).sort()).toEqual(volumes.map((v) => v.id).sort());
  });
});

describe('an unknown command', () => {
  it('is a usage mistake (exit 2) that suggests the nearest topic or command and the help to run', async () => {
    const topic = await dhv('volum');
    expect(topic.exitCode).toBe(2);
    expect(topic.stdout).toBe('');
    expect(topic.stderr).toBe(
      'Error: volum is not a dhv command.\nDid you mean `dhv volume`?\nRun `dhv help` for the list of commands.\n',
    );
    const command = await dhv('volume', 'creat', 'spec.hcl');
    expect(command.exitCode).toBe(2);
    expect(command.stderr).toBe(
      'Error: volume creat is not a dhv command.\nDid you mean `dhv volume create`?\nRun `dhv help volume` for the list of volume commands.\n',
    );
  });

  it('with --json, is one JSON error on stderr naming the suggestions', async () => {
    const run = await dhv('volum', 'status', '--json');
    expect(run.exitCode).toBe(2);
    expect(JSON.parse(run.stderr)).toEqual({
      apiVersion: 'dhv/v1',
      kind: 'Error',
      error: {
        code: 'UNKNOWN_COMMAND',
        message: expect.stringContaining('volum status is not a dhv command'),
        command: 'volum status',
        suggestions: ['volume status'],
      },
    });
  });

  it('never asks "Did you mean ...? (Y/n)", not even on a terminal', async () => {
    // script(1) gives dhv a pseudo-terminal for stdin and stdout; the old not-found plugin prompted there and waited.
    if (!existsSync('/usr/bin/script')) throw new Error('this test needs script(1) from util-linux (bsdutils)');
    const run = await new Promise<{ code: number; out: string }>((resolve) => {
      execFile(
        '/usr/bin/script',
        ['-qec', `${process.execPath} ${DHV_BIN} volum`, '/dev/null'],
        { env: { ...process.env, NO_COLOR: '1', DHV_DATA_DIR: dataDir }, timeout: 30_000 },
        (err, stdout) => resolve({ code: err ? Number(err.code ?? 1) : 0, out: stdout }),
      );
    });
    expect(run.out).toContain('volum is not a dhv command');
    expect(run.out).not.toMatch(/\(Y\/n\)/);
    expect(run.code).toBe(2);
  });
});

describe("Nomad's one-dash spelling", () => {
  it('is accepted for every flag longer than one letter, by every command, -json included', async () => {
    const fingerprint = await dhv('agent', 'fingerprint', '-json', `-data-dir=${dataDir}`);
    expect(fingerprint.exitCode, fingerprint.stderr).toBe(0);
    expect(JSON.parse(fingerprint.stdout)).toHaveProperty('Attributes');
    const list = await dhv('check', '-list', '-json');
    expect(list.exitCode, list.stderr).toBe(0);
    expect(JSON.parse(list.stdout)).toBeTruthy();
    const mistake = await dhv('check', '-json');
    expect(mistake.exitCode).toBe(2);
    expect(JSON.parse(mistake.stderr)).toMatchObject({ error: { code: 'USAGE' } });
  });
});

describe('flags that take several values', () => {
  it('take one value each time, so none swallows the argument after it', () => {
    const greedy = Object.entries(COMMANDS).flatMap(([id, command]) =>
      Object.entries(command.flags ?? {})
        .filter(([, flag]) => flag.type === 'option' && flag.multiple && !flag.multipleNonGreedy)
        .map(([name]) => `${id} --${name}`),
    );
    expect(greedy).toEqual([]);
  });

  it('leave the plugin path to dhv check: --only and --param before it', async () => {
    const missing = join(dataDir, 'no-such-plugin');
    for (const flags of [
      ['--only', 'discovery.executable'],
      ['--param', 'a=b', '--only', 'discovery.executable'],
    ]) {
      const run = await dhv('check', ...flags, missing, '--json');
      expect(run.stderr, flags.join(' ')).not.toMatch(/give the plugin executable/);
      expect(run.exitCode, flags.join(' ')).toBe(1);
      // The path reached dhv check as its plugin: the one error of a plugin that does not exist names it.
      const { error } = JSON.parse(run.stderr) as { error: { code: string; message: string } };
      expect(error.code, flags.join(' ')).toBe('PLUGIN_NOT_FOUND');
      expect(error.message).toContain(missing);
    }
  });
});

describe('numbers set in the environment', () => {
  it('refuses a value of DHV_CHECK_RUNS or DHV_LOCK_WAIT_MS that is not a usable number, naming the variable', async () => {
    // 2^32 ms: Node's raw "delay out of range"; 3e9 ms: silently cut to 1 ms by Node's timers.
    for (const [variable, value, args, unit, max] of [
      ['DHV_CHECK_RUNS', '0', ['check', 'no-such-plugin'], 'sequences', '100000'],
      ['DHV_CHECK_RUNS', '99999999999', ['check', 'no-such-plugin'], 'sequences', '100000'],
      ['DHV_LOCK_WAIT_MS', '4294967296', ['volume', 'status'], 'milliseconds', '2147483647'],
      ['DHV_LOCK_WAIT_MS', '3000000000', ['volume', 'status'], 'milliseconds', '2147483647'],
      ['DHV_LOCK_WAIT_MS', '1.5', ['agent', 'restart'], 'milliseconds', '2147483647'],
      ['DHV_LOCK_WAIT_MS', 'soon', ['volume', 'status'], 'milliseconds', '2147483647'],
    ] as const) {
      const run = await runDhv([...args], { env: { DHV_DATA_DIR: dataDir, [variable]: value } });
      const what = `${variable}=${value} dhv ${args.join(' ')}`;
      expect(run.exitCode, what).toBe(2);
      expect(run.stderr, what).toContain(
        `${variable}="${value}" is not a whole number of ${unit} from 1 to ${max}\nSet ${variable} to one`,
      );
    }
    const json = await runDhv(['volume', 'status', '--json'], {
      env: { DHV_DATA_DIR: dataDir, DHV_LOCK_WAIT_MS: '-1' },
    });
    expect(JSON.parse(json.stderr).error).toMatchObject({ code: 'ENV_INVALID', variable: 'DHV_LOCK_WAIT_MS' });
    // A usable value, or none, changes nothing else.
    for (const value of ['', '2147483647'])
      expect(
        (await runDhv(['volume', 'status'], { env: { DHV_DATA_DIR: dataDir, DHV_LOCK_WAIT_MS: value } })).exitCode,
      ).toBe(0);
  });
});
