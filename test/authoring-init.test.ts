import { join } from 'node:path';
import { execa } from 'execa';
import fs from 'fs-extra';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildEnvironment } from '@dhv/sdk/client';
import { ALL_BLOCKS } from './support/docs-blocks.js';
import { DHV_BIN as dhv, registryCa, REPO_ROOT as repo, skipRootTests, tempDir } from './support/kit.js';

/**
 * The whole author's path as typed: `dhv init` with no flags for every template, a plain
 * `npm install`, build, type-check, and the result run the way a Nomad agent does.
 * `dhv init` packs the SDK and harness into the project itself, so @dhv/* never come from
 * a registry: the first project's install takes the third-party packages from the user's npm
 * cache (from the registry where it lacks them, which fills it), the second installs with
 * `--offline` from that cache, and the third shares the second's node_modules (they have the
 * same dependencies).
 *
 * `dhv check` of a generated project, and its `npm test`, are the docs' examples, which run
 * them as written (test/docs-examples.test.ts, test/packaging-tarball.test.ts): the minimal
 * template in the README's Install section, the mkdir template in docs/authoring.md and the
 * harness README. Only the loopback template, which no page makes, is checked here.
 */

const TEMPLATES = ['minimal', 'mkdir', 'loopback'] as const;

/** The templates whose `dhv init`, `npm install` and `npm run check` (and `npm test`) a docs example runs, and the example's pattern. */
const CHECKED_BY_THE_DOCS = {
  minimal: /dhv init my-plugin && cd my-plugin\n[\s\S]*\bnpm run check\b/,
  mkdir: /dhv init (\S+) --template mkdir\n[\s\S]*\bnpm run check\b/,
} as const;
const NPM_TEST_BY_THE_DOCS = /dhv init (\S+) --template mkdir\b[\s\S]*^npm test\b/m;

interface Run {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/**
 * The environment for npm and vitest children: none of the npm_* or VITEST* settings of the run
 * that started us; two explorer sequences, since a template's check proves the template passes
 * and the explorer's own verdicts are tested in check-explore.
 */
const childEnv = {
  ...Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !/^(npm_|VITEST|NODE_OPTIONS$|FORCE_COLOR$)/i.test(key)),
  ),
  ...registryCa(),
  NO_COLOR: '1',
  DHV_CHECK_RUNS: '2',
};

async function run(
  file: string,
  args: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<Run> {
  const result = await execa(file, args, {
    cwd: options.cwd,
    env: options.env ?? childEnv,
    extendEnv: false,
    reject: false,
    stripFinalNewline: false,
  });
  return { exitCode: result.exitCode ?? 1, stdout: result.stdout, stderr: result.stderr };
}

function expectSuccess(result: Run, what: string): void {
  expect(result.exitCode, `${what} failed:\n${result.stdout}\n${result.stderr}`).toBe(0);
}

/** Runs the built plugin under `env -i` with only the variables an agent sets. */
function runBare(plugin: string, operation: 'fingerprint' | 'create' | 'delete', request: object): Promise<Run> {
  const env = buildEnvironment(operation, request as never, plugin);
  return run('/usr/bin/env', ['-i', ...Object.entries(env).map(([k, v]) => `${k}=${v}`), plugin, operation], {
    cwd: '/',
  });
}

/** Mount points under `dir`, from the kernel's table. */
async function mountsUnder(dir: string): Promise<string[]> {
  const table = await fs.readFile('/proc/self/mountinfo', 'utf8');
  return table
    .split('\n')
    .map((line) => line.split(' ')[4]?.replace(/\\040/g, ' '))
    .filter((point): point is string => point !== undefined && point.startsWith(`${dir}/`));
}

// The projects are separate folders, so their checks run side by side.
describe('dhv init with no flags, npm install, build, check: every template, offline', { concurrent: true }, () => {
  let work: string;
  const projects = new Map<string, string>();

  beforeAll(async () => {
    work = await tempDir('authoring-e2e');
    const npmInstall = (cwd: string, mode: '--prefer-offline' | '--offline') =>
      run('npm', ['install', mode, '--no-audit', '--no-fund', '--loglevel=error'], { cwd });

    await Promise.all(
      TEMPLATES.map(async (template) => {
        const init = await run(
          process.execPath,
          [dhv, 'init', `my-${template}`, ...(template === 'minimal' ? [] : ['--template', template]), '--json'],
          { cwd: work },
        );
        expectSuccess(init, `dhv init --template ${template}`);
        projects.set(template, JSON.parse(init.stdout).dir);
      }),
    );

    expectSuccess(
      await npmInstall(projects.get('mkdir')!, '--prefer-offline'),
      'npm install (filling the npm cache where it lacks a package)',
    );
    const minimal = projects.get('minimal')!;
    expectSuccess(await npmInstall(minimal, '--offline'), 'npm install --offline');
    await fs.symlink(join(minimal, 'node_modules'), join(projects.get('loopback')!, 'node_modules'));
  }, 400_000);

  afterAll(async () => {
    if (!work) return;
    for (const point of (await mountsUnder(work)).reverse()) await run('/usr/bin/umount', ['-l', point]);
    await fs.remove(work);
  }, 60_000);

  it('depends on packed copies of the SDK and harness that ran it, which npm installed without a registry', async () => {
    const minimal = projects.get('minimal')!;
    const manifest = await fs.readJson(join(minimal, 'package.json'));
    expect(manifest.dependencies['@dhv/sdk']).toBe('file:vendor/dhv-sdk-0.1.0.tgz');
    expect(manifest.devDependencies['@dhv/harness']).toBe('file:vendor/dhv-harness-0.1.0.tgz');
    const lock = await fs.readJson(join(minimal, 'package-lock.json'));
    expect(lock.packages['node_modules/@dhv/sdk'].resolved).toBe('file:vendor/dhv-sdk-0.1.0.tgz');
    expect(lock.packages['node_modules/@dhv/harness'].resolved).toBe('file:vendor/dhv-harness-0.1.0.tgz');
    expect(Object.keys(lock.packages).filter((path) => path.includes('@dhv/'))).toEqual([
      'node_modules/@dhv/harness',
      'node_modules/@dhv/sdk',
    ]);
    const installed = await fs.readJson(join(minimal, 'node_modules/@dhv/harness/package.json'));
    expect(installed.version).toBe((await fs.readJson(join(repo, 'packages/harness/package.json'))).version);
  });

  it("leaves the other templates' dhv check and npm test to the docs examples, which run them as written", () => {
    const run = ALL_BLOCKS.filter((b) => b.notRun === undefined && !b.saveAs).map((b) => b.text);
    for (const [template, example] of Object.entries(CHECKED_BY_THE_DOCS))
      expect(
        run.some((text) => example.test(text)),
        `a docs example that checks the ${template} template`,
      ).toBe(true);
    expect(
      run.some((text) => NPM_TEST_BY_THE_DOCS.test(text)),
      'a docs example that runs npm test',
    ).toBe(true);
  });

  for (const template of TEMPLATES) {
    const needsRoot = template === 'loopback';
    const checkedHere = !(template in CHECKED_BY_THE_DOCS);
    it.skipIf(needsRoot && skipRootTests(`the ${template} template's check`))(
      `${template}: builds, type-checks, ${checkedHere ? 'passes dhv check, ' : ''}and runs under env -i`,
      async () => {
        const project = projects.get(template)!;
        const plugin = join(project, `dist/my-${template}`);

        const build = checkedHere
          ? await run('npm', ['run', 'check', '--silent', '--', '--json'], { cwd: project })
          : await run('npm', ['run', 'build', '--silent'], { cwd: project });
        expectSuccess(build, `npm run ${checkedHere ? 'check' : 'build'} (${template})`);
        expectSuccess(
          await run('npm', ['run', 'typecheck', '--silent'], { cwd: project }),
          `npm run typecheck (${template})`,
        );

        const fingerprint = await run('/usr/bin/env', ['-i', 'DHV_OPERATION=fingerprint', plugin, 'fingerprint'], {
          cwd: '/',
        });
        expect(fingerprint).toMatchObject({ exitCode: 0, stdout: '{"version":"0.1.0"}\n' });

        const volumesDir = join(work, `volumes-${template}`);
        const request = {
          volumesDir,
          pluginDir: join(project, 'dist'),
          volumeName: 'example',
          volumeId: '3c2f1a7e-8b4d-4e6f-9a0b-1c2d3e4f5a6b',
          nodeId: '7d9e0f1a-2b3c-4d5e-8f6a-7b8c9d0e1f2a',
          capacityMinBytes: 16 * 1024 * 1024,
          capacityMaxBytes: 32 * 1024 * 1024,
        };
        await fs.ensureDir(volumesDir);
        const created = await runBare(plugin, 'create', request);
        expectSuccess(created, `${template} create under env -i`);
        const { path } = JSON.parse(created.stdout);
        expect(path).toBe(join(volumesDir, request.volumeId));
        expectSuccess(
          await runBare(plugin, 'delete', { ...request, createdPath: path }),
          `${template} delete under env -i`,
        );
        expect(await fs.readdir(volumesDir)).toEqual([]);
        expect(await mountsUnder(volumesDir)).toEqual([]);
      },
      600_000, // a whole dhv check: minutes at load 30
    );
  }

  it('scaffolds from the installed package too: the templates ship in the tarball, and it packs itself again', async () => {
    const installed = join(projects.get('minimal')!, 'node_modules/@dhv/harness/bin/run.js');
    const init = await run(process.execPath, [installed, 'init', 'from-package', '--template', 'loopback', '--json'], {
      cwd: work,
    });
    expectSuccess(init, 'dhv init from the installed @dhv/harness');
    expect(JSON.parse(init.stdout).files).toEqual(
      expect.arrayContaining(['src/plugin.ts', 'vendor/dhv-sdk-0.1.0.tgz', 'vendor/dhv-harness-0.1.0.tgz']),
    );
    expect(await fs.readFile(join(work, 'from-package/src/plugin.ts'), 'utf8')).toBe(
      await fs
        .readFile(join(projects.get('loopback')!, 'src/plugin.ts'), 'utf8')
        .then((text) => text.replaceAll('my-loopback', 'from-package')),
    );
    const listed = await run('tar', ['-tzf', join(work, 'from-package/vendor/dhv-harness-0.1.0.tgz')]);
    expect(listed.stdout.split('\n')).toEqual(
      expect.arrayContaining(['package/templates/common/test/plugin.test.ts', 'package/dist/index.js']),
    );
  });
});
