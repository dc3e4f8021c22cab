import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DHV_BIN } from './support/kit.js';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

let dataDir: string;
beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'dhv-cli-contract-'));
});
afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

function dhv(...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [DHV_BIN, ...args],
      { env: { ...process.env, DHV_DATA_DIR: dataDir } },
      (err, stdout, stderr) => {
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
      },
    );
  });
}

describe('one CLI contract for every command', () => {
  it('exits 2 for the same usage mistake, --param nope, from plugin run and from check', async () => {
    const fromRun = await dhv('plugin', 'run', 'mkdir', 'create', '--param', 'nope');
    const fromCheck = await dhv('check', '/bin/true', '--param', 'nope');
    expect([fromRun.code, fromCheck.code]).toEqual([2, 2]);
    expect(fromRun.stderr).toMatch(/^Error: --param "nope": expected key=value/);
    expect(fromCheck.stderr).toMatch(/^Error: --param "nope": expected key=value/);
  });

  it('prints a usage error oclif finds as one JSON error on stderr with --json, without oclif metadata', async () => {
    for (const args of [
      ['volume', 'status', '--bogus'],
      ['check', '/bin/true', '--bogus'],
      ['init', '--bogus', 'x'],
    ]) {
      const run = await dhv(...args, '--json');
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stdout).toBe('');
      const error = JSON.parse(run.stderr) as { error: Record<string, unknown> };
      expect(error).toEqual({
        error: { code: 'USAGE', message: expect.stringContaining('Nonexistent flag: --bogus') },
      });
    }
  });

  it('prints an operation failure in the same shape from an agent command and an authoring command', async () => {
    const missing = await dhv('volume', 'status', 'nope', '--json');
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stderr)).toEqual({ error: expect.objectContaining({ code: 'VOLUME_NOT_FOUND' }) });
    const build = await dhv('build', join(dataDir, 'none.ts'), '-o', join(dataDir, 'out'), '--json');
    expect(build.code).toBe(1);
    expect(JSON.parse(build.stderr)).toEqual({ error: expect.objectContaining({ code: 'BUILD_FAILED' }) });
  });
});
