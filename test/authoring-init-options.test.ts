import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, test } from 'vitest';
import { DHV_BIN as dhv, removeTempDir, REPO_ROOT as repo, tempDir } from './support/kit.js';

/** Runs `dhv init ... --json`; `--from-registry` unless the test is about packing, which takes seconds. */
async function dhvInit(
  args: string[],
  cwd: string,
  options: { pack?: boolean } = {},
): Promise<{ exitCode: number; json: any; stderr: string }> {
  const extra = options.pack || args.some((a) => a.endsWith('-from')) ? [] : ['--from-registry'];
  const result = await execa(process.execPath, [dhv, 'init', ...args, ...extra, '--json'], { cwd, reject: false });
  // With --json the result is printed on stdout, an error on stderr.
  const out = result.exitCode === 0 ? result.stdout : result.stderr;
  return { exitCode: result.exitCode ?? 1, json: out ? JSON.parse(out) : undefined, stderr: result.stderr };
}

/** Each test scaffolds in a folder of its own (`work`), so they run side by side. */
const it = test.extend<{ work: string }>({
  // vitest reads the fixtures a test needs from this first parameter's destructuring.
  // eslint-disable-next-line no-empty-pattern
  work: async ({}, use) => {
    const work = await tempDir('authoring-init');
    try {
      await use(work);
    } finally {
      await removeTempDir(work);
    }
  },
});

describe.concurrent('dhv init options', () => {
  it('names the plugin after the folder and writes the whole project, with packed copies of the SDK and harness', async ({
    work,
  }) => {
    const { exitCode, json } = await dhvInit(['scratch-dir'], work, { pack: true });
    expect(exitCode).toBe(0);
    expect(json).toMatchObject({ dir: join(work, 'scratch-dir'), pluginId: 'scratch-dir', template: 'minimal' });
    expect(json.files).toEqual([
      '.gitignore',
      'package.json',
      'README.md',
      'src/plugin.ts',
      'test/plugin.test.ts',
      'tsconfig.json',
      'vendor/dhv-harness-0.1.0.tgz',
      'vendor/dhv-sdk-0.1.0.tgz',
      'volume.hcl',
    ]);
    const manifest = JSON.parse(await readFile(join(work, 'scratch-dir/package.json'), 'utf8'));
    expect(manifest.scripts.build).toBe('dhv build src/plugin.ts -o dist/scratch-dir');
    expect(manifest.dependencies['@dhv/sdk']).toBe('file:vendor/dhv-sdk-0.1.0.tgz');
    expect(manifest.devDependencies['@dhv/harness']).toBe('file:vendor/dhv-harness-0.1.0.tgz');
    expect(manifest.overrides).toEqual({ '@dhv/sdk': '$@dhv/sdk' });
    expect(await readFile(join(work, 'scratch-dir/.gitignore'), 'utf8')).toContain('!vendor/*.tgz');
    expect(await readFile(join(work, 'scratch-dir/src/plugin.ts'), 'utf8')).toContain("name: 'scratch-dir'");
    expect(await readFile(join(work, 'scratch-dir/volume.hcl'), 'utf8')).toContain('plugin_id = "scratch-dir"');
  });

  it('fills every placeholder in every template', async ({ work }) => {
    for (const template of ['minimal', 'mkdir', 'loopback']) {
      const { exitCode, json } = await dhvInit([template, '--template', template, '--name', `my-${template}`], work);
      expect(exitCode).toBe(0);
      for (const file of json.files) {
        expect(await readFile(join(json.dir, file), 'utf8'), `${template}/${file}`).not.toMatch(/\{\{\w+\}\}/);
      }
    }
  });

  it.for([
    ['mkdir', 'built-in plugin called mkdir'],
    ['a.b', "letters, digits, '-' and '_'"],
    ['-rf', "letters, digits, '-' and '_'"],
    ['has space', "letters, digits, '-' and '_'"],
    ['x'.repeat(129), 'longer than 128'],
  ] as const)('refuses the plugin ID %j', async ([name, why], { work }) => {
    const { exitCode, json } = await dhvInit(['project', '--name', name], work);
    expect(exitCode).toBe(1);
    expect(json.error.code).toBe('INVALID_PLUGIN_ID');
    expect(json.error.message).toContain(why);
    expect(await readdir(work)).toEqual([]);
  });

  it('says to pass --name when the folder name cannot be a plugin ID', async ({ work }) => {
    const { exitCode, json } = await dhvInit(['mkdir'], work);
    expect(exitCode).toBe(1);
    expect(json.error.message).toContain('pass --name');
    expect(await readdir(work)).toEqual([]);
  });

  it('refuses a folder that is not empty, and writes into it with --force', async ({ work }) => {
    await mkdir(join(work, 'busy'));
    await writeFile(join(work, 'busy/notes.txt'), 'keep me');
    const refused = await dhvInit(['busy'], work);
    expect(refused.exitCode).toBe(1);
    expect(refused.json.error.code).toBe('DIRECTORY_NOT_EMPTY');
    expect(refused.json.error.message).toContain('--force');
    expect(await readdir(join(work, 'busy'))).toEqual(['notes.txt']);

    const forced = await dhvInit(['busy', '--force'], work);
    expect(forced.exitCode).toBe(0);
    expect(await readFile(join(work, 'busy/notes.txt'), 'utf8')).toBe('keep me');
    expect(await readFile(join(work, 'busy/src/plugin.ts'), 'utf8')).toContain("name: 'busy'");
  });

  it('refuses a path that is a file', async ({ work }) => {
    await writeFile(join(work, 'a-file'), '');
    const { exitCode, json } = await dhvInit(['a-file'], work);
    expect(exitCode).toBe(1);
    expect(json.error.code).toBe('NOT_A_DIRECTORY');
  });

  it('refuses an unknown template', async ({ work }) => {
    const result = await dhvInit(['project', '--template', 'zfs'], work);
    expect(result.exitCode).not.toBe(0);
    expect(result.json.error.message).toContain('minimal, mkdir, loopback');
    expect(await readdir(work)).toEqual([]);
  });

  it('depends on the published versions with --from-registry', async ({ work }) => {
    const { exitCode, json } = await dhvInit(['project'], work);
    expect(exitCode).toBe(0);
    expect(json.files).not.toContain('vendor/dhv-sdk-0.1.0.tgz');
    const manifest = JSON.parse(await readFile(join(json.dir, 'package.json'), 'utf8'));
    expect(manifest.dependencies['@dhv/sdk']).toBe('^0.1.0');
    expect(manifest.devDependencies['@dhv/harness']).toBe('^0.1.0');
    expect(manifest.overrides).toBeUndefined();
  });

  it('says what to do when npm cannot pack the packages, and leaves nothing behind', async ({ work }) => {
    const result = await execa(process.execPath, [dhv, 'init', 'project', '--json'], {
      cwd: work,
      reject: false,
      env: { PATH: '/nonexistent' },
      extendEnv: false,
    });
    expect(result.exitCode).toBe(1);
    const { error } = JSON.parse(result.stderr);
    expect(error.code).toBe('PACK_FAILED');
    expect(error.message).toContain('npm was not found on PATH');
    expect(error.message).toContain('--from-registry');
    expect(await readdir(work)).toEqual([]);
  });

  it('points the dependencies at local folders, and the sdk of the harness at the same copy', async ({ work }) => {
    const { exitCode, json } = await dhvInit(
      ['project', '--sdk-from', join(repo, 'packages/sdk'), '--harness-from', join(repo, 'packages/harness')],
      work,
    );
    expect(exitCode).toBe(0);
    const manifest = JSON.parse(await readFile(join(json.dir, 'package.json'), 'utf8'));
    expect(manifest.dependencies['@dhv/sdk']).toBe(`file:${join(repo, 'packages/sdk')}`);
    expect(manifest.devDependencies['@dhv/harness']).toBe(`file:${join(repo, 'packages/harness')}`);
    expect(manifest.overrides).toEqual({ '@dhv/sdk': '$@dhv/sdk' });
  });

  it('refuses a package source that is missing, or is another package', async ({ work }) => {
    const missing = await dhvInit(['project', '--sdk-from', join(work, 'nowhere.tgz')], work);
    expect(missing.json.error).toMatchObject({ code: 'BAD_PACKAGE_SOURCE' });
    expect(missing.json.error.message).toContain('does not exist');
    const wrong = await dhvInit(['project', '--sdk-from', join(repo, 'packages/harness')], work);
    expect(wrong.json.error.message).toContain('is not the @dhv/sdk package');
    expect(await readdir(work)).toEqual([]);
  });
});
