import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { removeTempDir, runDhv, tempDir } from './support/kit.js';

let dataDir: string;
beforeEach(async () => {
  dataDir = await tempDir('cli-contract');
});
afterEach(async () => {
  await removeTempDir(dataDir);
});

async function dhv(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const { exitCode, stdout, stderr } = await runDhv(args, { env: { DHV_DATA_DIR: dataDir } });
  return { code: exitCode, stdout, stderr };
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
