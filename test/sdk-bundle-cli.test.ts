import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { removeTempDir, tempDir } from './support/kit.js';

const BIN = fileURLToPath(new URL('../packages/sdk/bin/dhv-bundle.js', import.meta.url));
const ENTRY = fileURLToPath(new URL('./fixtures/sdk/demo-plugin.ts', import.meta.url));
const run = promisify(execFile);

let dir: string;

beforeEach(async () => {
  dir = await tempDir('sdk-bundle');
});

afterEach(async () => {
  await removeTempDir(dir);
});

const bundle = (...args: string[]) =>
  run(process.execPath, [BIN, ...args]).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (err: { code: number; stdout: string; stderr: string }) => ({
      code: err.code,
      stdout: err.stdout,
      stderr: err.stderr,
    }),
  );

describe('dhv-bundle', () => {
  it('bundles a plugin into one executable file and says where', async () => {
    const out = join(dir, 'demo');
    const result = await bundle(ENTRY, out);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      `built ${out} (${(await stat(out)).size} bytes, runs ${process.execPath} or the first node found)\n`,
    );
    expect((await stat(out)).mode & 0o777).toBe(0o755);
  });

  it('prints JSON with --json, for success and failure', async () => {
    const ok = await bundle(ENTRY, join(dir, 'demo'), '--json', '--node', '/usr/bin/node');
    expect(JSON.parse(ok.stdout)).toMatchObject({ outfile: join(dir, 'demo'), interpreter: '/usr/bin/node' });
    const bad = await bundle(join(dir, 'missing.ts'), join(dir, 'x'), '--json');
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stdout)).toEqual({ error: `plugin entry ${join(dir, 'missing.ts')} does not exist` });
  });

  it('explains itself with --help, and refuses wrong usage with exit status 2', async () => {
    expect((await bundle('--help')).stdout).toMatch(/^usage: dhv-bundle <entry> <outfile>/);
    const wrong = await bundle(ENTRY);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/expected an entry and an output file/);
  });

  it('refuses an interpreter that is not an absolute path', async () => {
    const result = await bundle(ENTRY, join(dir, 'demo'), '--node', 'node');
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/must be an absolute path/);
  });
});
