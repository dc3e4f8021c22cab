import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, readdir, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, test } from 'vitest';
import { execPlugin } from '@dhv/sdk/client';
import { DHV_BIN as dhv, removeTempDir, REPO_ROOT as repo, tempDir } from './support/kit.js';

interface Run {
  exitCode: number;
  stdout: string;
  stderr: string;
}

async function run(file: string, args: string[], options: { cwd?: string } = {}): Promise<Run> {
  const result = await execa(file, args, { ...options, reject: false, stripFinalNewline: false });
  return { exitCode: result.exitCode ?? 1, stdout: result.stdout, stderr: result.stderr };
}

const dhvBuild = (args: string[], cwd: string) => run(process.execPath, [dhv, 'build', ...args], { cwd });

const PLUGIN = `import { definePlugin } from '@dhv/sdk/plugin';
export default definePlugin({
  name: 'tiny',
  version: '2',
  create: (request) => ({ path: request.volumesDir + '/' + request.volumeId, bytes: 0 }),
  delete: () => {},
});
`;

/** Each test builds in a folder of its own (`work`), so they run side by side. */
const it = test.extend<{ work: string }>({
  // vitest reads the fixtures a test needs from this first parameter's destructuring.
  // eslint-disable-next-line no-empty-pattern
  work: async ({}, use) => {
    const work = await tempDir('authoring-build');
    try {
      // The entry imports @dhv/sdk the way a plugin project does.
      await mkdir(join(work, 'node_modules/@dhv'), { recursive: true });
      await symlink(join(repo, 'packages/sdk'), join(work, 'node_modules/@dhv/sdk'));
      await writeFile(join(work, 'plugin.ts'), PLUGIN);
      await use(work);
    } finally {
      await removeTempDir(work);
    }
  },
});

describe.concurrent('dhv build', () => {
  it('bundles one executable file whose launcher tries the node running the build first', async ({ work }) => {
    const result = await dhvBuild(['plugin.ts', '-o', 'dist/tiny', '--json'], work);
    expect(result.exitCode, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report).toMatchObject({
      outfile: join(work, 'dist/tiny'),
      apiVersion: 'dhv/v1',
      kind: 'BuildResult',
      format: 'script',
      node: process.execPath,
      version: '2.0.0',
      warnings: [],
    });
    expect(report.searchPath[0]).toBe(process.execPath);
    expect(report.searchPath).toEqual(expect.arrayContaining(['/usr/local/bin/node', '/usr/bin/node']));
    const [first, second] = (await readFile(join(work, 'dist/tiny'), 'utf8')).split('\n');
    expect(first).toBe('#!/bin/sh');
    expect(second).toContain(`for n in '${process.execPath}' `);
    expect((await stat(join(work, 'dist/tiny'))).mode & 0o777).toBe(0o755);
  });

  it('builds a plugin that works under env -i, with no PATH, from any directory', async ({ work }) => {
    expect((await dhvBuild(['plugin.ts', '-o', 'dist/tiny'], work)).exitCode).toBe(0);
    const bare = await run(
      '/usr/bin/env',
      ['-i', 'DHV_OPERATION=fingerprint', join(work, 'dist/tiny'), 'fingerprint'],
      { cwd: '/' },
    );
    expect(bare).toMatchObject({ exitCode: 0, stdout: '{"version":"2"}\n' });
    const created = await execPlugin(join(work, 'dist/tiny'), 'create', {
      volumesDir: join(work, 'volumes'),
      volumeId: '0b8a3b5e-3f1c-4c47-9d3e-6a3c4c1e2f10',
      volumeName: 'v',
      nodeId: 'a1f0c3d2-5b6e-4f70-8a9b-0c1d2e3f4a5b',
    });
    expect(created.path).toBe(join(work, 'volumes/0b8a3b5e-3f1c-4c47-9d3e-6a3c4c1e2f10'));
  });

  it("with --sourcemap, a plugin's stack trace names its source file and line, on its stderr and in dhv check's report", async ({
    work,
  }) => {
    await writeFile(
      join(work, 'crash.ts'),
      [
        "import { definePlugin } from '@dhv/sdk/plugin';",
        'function readState(): { size: number } {',
        '  const state = undefined as unknown as { size: number } | undefined;',
        '  return { size: state!.size };',
        '}',
        'export default definePlugin({',
        "  name: 'crash',",
        "  version: '1',",
        '  create: () => ({ path: String(readState().size), bytes: 0 }),',
        '  delete: () => {},',
        '});',
        '',
      ].join('\n'),
    );
    for (const [args, frame] of [
      [['--sourcemap'], /at readState \(\S*crash\.ts:4:\d+\)/],
      [[], /the plugin is minified: `dhv build --sourcemap`/],
    ] as const) {
      const built = await dhvBuild(['crash.ts', '-o', 'dist/crash', ...args], work);
      expect(built.exitCode, built.stderr).toBe(0);
      const check = await run(process.execPath, [
        dhv,
        'check',
        join(work, 'dist/crash'),
        '--only',
        'create.path',
        '--json',
      ]);
      const result = JSON.parse(check.stdout).results.find((r: { id: string }) => r.id === 'create.path');
      expect(result.reason).toContain("the plugin's stack trace: TypeError: Cannot read properties of undefined");
      expect(result.reason).toMatch(frame);
    }
  });

  it('writes a plain #! line for the node chosen with --node --fixed-node', async ({ work }) => {
    const result = await dhvBuild(
      ['plugin.ts', '-o', 'dist/tiny', '--node', process.execPath, '--fixed-node', '--json'],
      work,
    );
    expect(result.exitCode, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ searchPath: [process.execPath], version: '2.0.0' });
    expect((await readFile(join(work, 'dist/tiny'), 'utf8')).startsWith(`#!${process.execPath}\n`)).toBe(true);
  });

  it('builds for a node that is not on this machine: the launcher tries it first and falls back here', async ({
    work,
  }) => {
    const result = await dhvBuild(['plugin.ts', '-o', 'dist/tiny', '--node', '/opt/node-20/bin/node', '--json'], work);
    expect(result.exitCode, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report).toMatchObject({
      version: '2.0.0',
      searchPath: expect.arrayContaining(['/opt/node-20/bin/node', '/usr/bin/node']),
    });
    expect(report.searchPath[0]).toBe('/opt/node-20/bin/node');
    expect(report.warnings[0]).toContain(
      '/opt/node-20/bin/node does not exist on this machine, so the smoke test ran with the first node the launcher found',
    );
  });

  it('with --fixed-node for a node that is not on this machine, says it could not run the result', async ({ work }) => {
    const result = await dhvBuild(
      ['plugin.ts', '-o', 'dist/tiny', '--node', '/opt/node-20/bin/node', '--fixed-node', '--json'],
      work,
    );
    expect(result.exitCode, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report.version).toBeNull();
    expect(report.warnings[0]).toContain(
      '/opt/node-20/bin/node does not exist on this machine, so the built plugin was not run',
    );
    expect((await readFile(join(work, 'dist/tiny'), 'utf8')).startsWith('#!/opt/node-20/bin/node\n')).toBe(true);
  });

  it('refuses a relative --node, since the agent runs plugins without PATH', async ({ work }) => {
    const result = await dhvBuild(['plugin.ts', '-o', 'dist/tiny', '--node', 'node', '--json'], work);
    expect(result.exitCode).toBe(1);
    expect(JSON.parse(result.stderr).error).toMatchObject({ code: 'BAD_INTERPRETER' });
    await expect(stat(join(work, 'dist/tiny'))).rejects.toThrow();
  });

  it('names a missing entry', async ({ work }) => {
    const result = await dhvBuild(['nope.ts', '-o', 'dist/tiny', '--json'], work);
    expect(result.exitCode).toBe(1);
    expect(JSON.parse(result.stderr).error.message).toContain(
      `the plugin entry ${join(work, 'nope.ts')} does not exist`,
    );
  });

  it('reports a bundling error with the file and leaves no output', async ({ work }) => {
    await writeFile(join(work, 'broken.ts'), "import { nothing } from './missing.js';\nexport default nothing;\n");
    const result = await dhvBuild(['broken.ts', '-o', 'dist/broken', '--json'], work);
    expect(result.exitCode).toBe(1);
    const { error } = JSON.parse(result.stderr);
    expect(error.code).toBe('BUILD_FAILED');
    expect(error.message).toContain('missing.js');
    await expect(stat(join(work, 'dist/broken'))).rejects.toThrow();
  });

  it('removes a build that does not answer fingerprint as an agent runs it, and says why', async ({ work }) => {
    await writeFile(join(work, 'crash.ts'), "throw new Error('boom at start-up');\n");
    const result = await dhvBuild(['crash.ts', '-o', 'dist/crash', '--json'], work);
    expect(result.exitCode).toBe(1);
    const { error } = JSON.parse(result.stderr);
    expect(error.code).toBe('BUILD_DOES_NOT_RUN');
    expect(error.message).toContain('boom at start-up');
    await expect(stat(join(work, 'dist/crash'))).rejects.toThrow();
  });

  it('fails a plugin whose entry does not export definePlugin, saying so', async ({ work }) => {
    await writeFile(join(work, 'no-default.ts'), 'export const plugin = 1;\n');
    const result = await dhvBuild(['no-default.ts', '-o', 'dist/no-default', '--json'], work);
    expect(result.exitCode).toBe(1);
    const { error } = JSON.parse(result.stderr);
    expect(error.code).toBe('BUILD_DOES_NOT_RUN');
    expect(error.message).toContain('definePlugin');
    await expect(stat(join(work, 'dist/no-default'))).rejects.toThrow();
  });

  it('refuses --sea with a node that is not on this machine, since it is copied into the plugin', async ({ work }) => {
    const result = await dhvBuild(
      ['plugin.ts', '-o', 'dist/tiny', '--sea', '--node', '/opt/node-20/bin/node', '--json'],
      work,
    );
    expect(result.exitCode).toBe(1);
    expect(JSON.parse(result.stderr).error).toMatchObject({ code: 'BAD_INTERPRETER' });
    await expect(stat(join(work, 'dist/tiny'))).rejects.toThrow();
  });

  it('refuses to write the bundle beside a "type": "module" package.json, where node would load it as ESM', async ({
    work,
  }) => {
    await writeFile(join(work, 'package.json'), JSON.stringify({ name: 'p', type: 'module' }));
    const result = await dhvBuild(['plugin.ts', '-o', 'tiny', '--json'], work);
    expect(result.exitCode).toBe(1);
    const { error } = JSON.parse(result.stderr);
    expect(error.code).toBe('BUILD_FAILED');
    expect(error.message).toContain('write the bundle to another folder');
    await expect(stat(join(work, 'tiny'))).rejects.toThrow();
  });

  it('keeps the bundle CommonJS inside a "type": "module" project', async ({ work }) => {
    await writeFile(join(work, 'package.json'), JSON.stringify({ name: 'p', type: 'module' }));
    expect((await dhvBuild(['plugin.ts', '-o', 'dist/tiny'], work)).exitCode).toBe(0);
    expect(JSON.parse(await readFile(join(work, 'dist/package.json'), 'utf8'))).toEqual({ type: 'commonjs' });
    const bare = await run('/usr/bin/env', ['-i', 'DHV_OPERATION=fingerprint', join(work, 'dist/tiny'), 'fingerprint']);
    expect(bare.stdout).toBe('{"version":"2"}\n');
  });

  it('with --sea, builds a single executable that answers fingerprint under env -i', async ({ work }) => {
    const result = await dhvBuild(['plugin.ts', '-o', 'dist/tiny', '--sea', '--json'], work);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ format: 'sea', version: '2.0.0' });
    const binary = await readFile(join(work, 'dist/tiny'));
    expect(binary.subarray(0, 4).toString('latin1')).toBe('\x7fELF');
    const bare = await run(
      '/usr/bin/env',
      ['-i', 'DHV_OPERATION=fingerprint', join(work, 'dist/tiny'), 'fingerprint'],
      { cwd: '/' },
    );
    expect(bare).toMatchObject({ exitCode: 0, stdout: '{"version":"2"}\n', stderr: '' });
    const created = await execPlugin(join(work, 'dist/tiny'), 'create', {
      volumesDir: join(work, 'volumes'),
      volumeId: '0b8a3b5e-3f1c-4c47-9d3e-6a3c4c1e2f10',
      volumeName: 'v',
      nodeId: 'a1f0c3d2-5b6e-4f70-8a9b-0c1d2e3f4a5b',
    });
    expect(created.bytes).toBe(0n);
  }, 120_000);

  it('with --sea, killed with kill -9 half way, leaves nothing once the next dhv command has run', async ({ work }) => {
    const journal = join(work, 'journal');
    const env = { ...process.env, DHV_CLEANUP_JOURNAL: journal };
    const build = execa(process.execPath, [dhv, 'build', 'plugin.ts', '-o', 'dist/tiny', '--sea'], {
      cwd: work,
      env,
      reject: false,
    });
    const workFolders = async () => (await readdir(join(work, 'dist')).catch(() => [])).filter((f) => f !== 'tiny');
    for (let i = 0; i < 2400 && (await workFolders()).length === 0 && build.exitCode === null; i++)
      await new Promise((r) => setTimeout(r, 25));
    build.kill('SIGKILL');
    expect((await build).signal).toBe('SIGKILL');
    const made = await workFolders();
    expect(made).toEqual([expect.stringMatching(/^\.dhv-build-/)]);
    const recorded = (await readdir(journal)).map((f) => readFileSync(join(journal, f), 'utf8')).join('\n');
    // dhv build's own work folder, in its TMPDIR (the suite's, scripts/suite-tmpdir.mjs).
    const bundled = [...recorded.matchAll(/"path":"([^"]+)"/g)]
      .map((m) => m[1]!)
      .find((path) => path.startsWith(join(tmpdir(), 'dhv-build-')));
    expect(bundled).toBeDefined();

    const next = await execa(process.execPath, [dhv, 'check', '--list'], { env, reject: false });
    expect(next.stderr).toContain('finished the cleanup of');
    expect(await workFolders()).toEqual([]);
    expect(existsSync(bundled!)).toBe(false);
    expect(await readdir(journal)).toEqual([]);
  }, 120_000);

  it("writes dist/<plugin ID> of the entry's project when -o is not given, the ID being its package.json name", async ({
    work,
  }) => {
    await writeFile(join(work, 'package.json'), JSON.stringify({ name: '@me/tiny-dir', version: '1.0.0' }));
    await mkdir(join(work, 'src'));
    await writeFile(join(work, 'src/plugin.ts'), PLUGIN);
    // From a subfolder: the default is the project's dist/, not the working directory's.
    const result = await dhvBuild(['plugin.ts', '--json'], join(work, 'src'));
    expect(result.exitCode, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ outfile: join(work, 'dist/tiny-dir'), version: '2.0.0' });
    expect((await stat(join(work, 'dist/tiny-dir'))).mode & 0o111).not.toBe(0);
  });

  it('without -o and without a package.json naming the plugin, says to give -o (a usage mistake, exit 2)', async ({
    work,
  }) => {
    const result = await dhvBuild(['plugin.ts', '--json'], work);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).not.toMatch(/Missing required flag/);
    expect(JSON.parse(result.stderr)).toEqual({
      apiVersion: 'dhv/v1',
      kind: 'Error',
      error: expect.objectContaining({ code: 'NO_OUTPUT', message: expect.stringContaining('-o dist/<plugin ID>') }),
    });
  });
});
