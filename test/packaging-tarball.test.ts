import { join } from 'node:path';
import { execa } from 'execa';
import fs from 'fs-extra';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  blocksRunBy,
  copyCheckout,
  expectSectionsRan,
  runPrefix,
  runSections,
  userEnv,
  type BlockRun,
  type SectionResult,
} from './support/docs-blocks.js';
import { writeStandIns } from './support/docs-stand-ins.js';
import { REPO_ROOT, tempDir, removeTempDir } from './support/kit.js';

/**
 * The one-file install, as the README's *Install* section says it, run as written (the docs
 * runner, test/support/docs-blocks.ts): `npm ci && npm run pack` in a copy of the checkout
 * makes dhv-<version>.tgz; in an empty folder beside it (another host), `npm install -g` of
 * that file alone, into an empty prefix with an empty npm cache and the registry unreachable,
 * gives a working `dhv`, whose `dhv init` makes a project that installs, builds and passes
 * `dhv check` outside any checkout. That project installs no @dhv/* package from the
 * registry: its own dev tools (typescript, vitest, @types/node) and the harness's zod do come
 * from the npm cache or registry, as they would for any TypeScript project.
 *
 * The section runs once, and every test below judges what it made.
 */

const ALLOW_SCRIPTS_WARNING = /not yet covered by allowScripts/;
const INSTALL = blocksRunBy('test/packaging-tarball.test.ts');

let work: string;
let run: BlockRun;
let sections: SectionResult[];
let dhvBin: string;

const dhv = (args: string[], cwd = work) =>
  execa(dhvBin, args, { cwd, env: { ...userEnv, NO_COLOR: '1' }, extendEnv: false, reject: false });

beforeAll(async () => {
  work = await tempDir('packaging-tarball');
  run = { dir: work, checkout: join(work, 'dhv'), bin: join(work, 'bin'), namespace: false };
  await writeStandIns(run.bin);
  await copyCheckout(run.checkout);
  sections = await runSections(INSTALL, run);
  dhvBin = join(runPrefix(run), 'bin/dhv');
}, 600_000);

afterAll(async () => {
  await removeTempDir(work);
}, 60_000);

// The tests share only what the README's section made, which none of them changes: they run side by side.
describe.concurrent('dhv-harness-<version>.tgz, as the README installs it, with no registry', () => {
  it("runs the README's Install section as written: pack, npm install -g, dhv init, npm install, build, check", () => {
    expect(INSTALL.map((b) => b.text).join('\n')).toMatch(
      /npm run pack[\s\S]*npm install -g \.\/dhv-harness-0\.1\.0\.tgz[\s\S]*dhv plugin list/,
    );
    expectSectionsRan(sections, INSTALL, expect);
    const output = sections.map((s) => s.output).join('\n');
    expect(output).toMatch(/^@dhv\/harness\/0\.1\.0 /m);
    expect(output).toMatch(/^OK: no required check failed/m);
  });

  it('is named dhv-harness-<version>.tgz and installs with npm install -g, with no install script to allow', async () => {
    expect(await fs.pathExists(join(run.checkout, 'dhv-harness-0.1.0.tgz'))).toBe(true);
    expect(await fs.pathExists(join(work, 'host/dhv-harness-0.1.0.tgz'))).toBe(true);
    expect(sections.map((s) => s.output).join('\n')).not.toMatch(ALLOW_SCRIPTS_WARNING);
  });

  it('lists the reference plugins inside the global install, and copies one into a plugin dir', async () => {
    const listed = await dhv(['plugin', 'list', '--json']);
    expect(listed.exitCode, listed.stderr).toBe(0);
    const { plugins } = JSON.parse(listed.stdout) as { plugins: Array<{ id: string; path: string }> };
    expect(plugins.map((p) => p.id)).toEqual(['dhv-mkdir', 'dhv-loopback']);
    for (const p of plugins) {
      expect(p.path.startsWith(join(runPrefix(run), 'lib/node_modules/@dhv/harness/')), p.path).toBe(true);
      expect(await fs.pathExists(p.path)).toBe(true);
    }
    // The README's block copied dhv-mkdir into ./host_volume_plugins; it runs there as a plugin.
    const installed = join(work, 'host/host_volume_plugins/dhv-mkdir');
    expect(await fs.readFile(installed)).toEqual(await fs.readFile(plugins[0]!.path));
    const check = await dhv(['check', installed, '--only', 'discovery']);
    expect(check.exitCode, check.stdout + check.stderr).toBe(0);
  });

  it('is upgraded in place by npm install -g of a newer dhv-harness-<version>.tgz, as the README says', async () => {
    const prefix = join(work, 'upgrade-prefix');
    // No audit, as in the README's section: npm's audit in offline mode can wait for ever (npm/cli#4368),
    // and once (a CI run of 8e4740e) this install sat 600 s idle, with no socket and no child.
    const env = {
      ...userEnv,
      npm_config_prefix: prefix,
      npm_config_cache: join(work, 'upgrade-cache'),
      npm_config_audit: 'false',
      npm_config_fund: 'false',
      npm_config_update_notifier: 'false',
    };
    const host = join(work, 'host');
    // A hang fails here, with npm's output, long before the test's own timeout.
    const npm = (args: string[]) =>
      execa('npm', args, { cwd: host, env, extendEnv: false, reject: false, timeout: 240_000 });
    // The install to upgrade: the one the README's section made with npm install -g (that install is
    // judged above), copied as it is rather than made again by npm (about 11 CPU-s).
    await execa('cp', ['-a', runPrefix(run), prefix]);
    expect((await execa(join(prefix, 'bin/dhv'), ['--version'], { env: userEnv, extendEnv: false })).stdout).toMatch(
      /^@dhv\/harness\/0\.1\.0 /,
    );
    // The next release's file: this one with its version moved on (the CLI's manifest carries it too).
    const next = join(work, 'next');
    await fs.mkdirp(next);
    await execa('tar', ['xzf', join(host, 'dhv-harness-0.1.0.tgz'), '-C', next]);
    for (const file of ['package.json', 'oclif.manifest.json']) {
      const path = join(next, 'package', file);
      const json = (await fs.readJson(path)) as { version: string };
      await fs.writeJson(path, { ...json, version: '0.1.1' }, { spaces: 2 });
    }
    // Gzip's fastest level: npm reads any, and the default one took about a CPU-s more for these 48 MB.
    await execa('tar', ['-I', 'gzip -1', '-cf', join(host, 'dhv-harness-0.1.1.tgz'), '-C', next, 'package']);
    const upgrade = await npm(['install', '-g', './dhv-harness-0.1.1.tgz', '--offline']);
    expect(upgrade.exitCode, `${upgrade.timedOut ? 'npm was still running after 240 s: ' : ''}${upgrade.stderr}`).toBe(
      0,
    );
    const version = await execa(join(prefix, 'bin/dhv'), ['--version'], {
      env: userEnv,
      extendEnv: false,
      reject: false,
    });
    expect(version.stdout, version.stderr).toMatch(/^@dhv\/harness\/0\.1\.1 /);
    expect(await fs.readdir(join(prefix, 'lib/node_modules/@dhv'))).toEqual(['harness']);
    const listed = await npm(['ls', '-g', '--depth=0']);
    expect(listed.stdout.match(/@dhv\/harness@/g)).toHaveLength(1);
    expect(listed.stdout).toContain('@dhv/harness@0.1.1');
  });

  it('brings the SDK alone as dhv-sdk-<version>.tgz: a program that execs plugins installs it with an empty npm cache', async () => {
    const program = join(work, 'exec-only');
    await fs.mkdirp(program);
    await fs.copy(join(run.checkout, 'dhv-sdk-0.1.0.tgz'), join(program, 'dhv-sdk-0.1.0.tgz'));
    const env = { ...userEnv, npm_config_cache: join(work, 'sdk-empty-cache'), npm_config_update_notifier: 'false' };
    const npm = (args: string[]) => execa('npm', args, { cwd: program, env, extendEnv: false, reject: false });
    expect((await npm(['init', '-y'])).exitCode).toBe(0);
    const install = await npm(['install', './dhv-sdk-0.1.0.tgz', '--no-audit', '--no-fund']);
    expect(install.exitCode, install.stderr).toBe(0);
    const { plugins } = JSON.parse((await dhv(['plugin', 'list', '--json'])).stdout) as {
      plugins: Array<{ path: string }>;
    };
    // What is judged is the installed SDK, not the plugin's start on a loaded machine: no 1 s deadline.
    await fs.writeFile(
      join(program, 'run.mjs'),
      `import { execPlugin } from '@dhv/sdk/client';\nconst r = await execPlugin(process.argv[2], 'fingerprint', {}, { pluginId: 'dhv-mkdir', timeoutMs: 60000 });\nconsole.log(r.version);\n`,
    );
    const ran = await execa(process.execPath, ['run.mjs', plugins[0]!.path], {
      cwd: program,
      env,
      extendEnv: false,
      reject: false,
    });
    expect(ran.exitCode, ran.stderr).toBe(0);
    expect(ran.stdout.trim()).toBe('0.1.0');
  });

  it('runs dhv help volume create', async () => {
    const help = await dhv(['help', 'volume', 'create']);
    expect(help.exitCode, help.stderr).toBe(0);
    expect(help.stdout).toMatch(/^USAGE\n\s+\$ dhv volume create SPEC/m);
  });

  it('runs dhv demo with the reference plugins that came inside the tarball', async () => {
    const demo = await dhv(['demo', '--json']);
    expect(demo.exitCode, demo.stderr).toBe(0);
    expect(JSON.parse(demo.stdout)).toMatchObject({ ok: true, leftBehind: [] });
  });

  it('makes with dhv init a project whose npm install took no @dhv/* from the registry', async () => {
    const project = join(work, 'host/my-plugin');
    expect(await fs.readFile(join(project, '.gitignore'), 'utf8')).toMatch(/^\.dhv\/$/m);
    const lock = (await fs.readJson(join(project, 'package-lock.json'))) as {
      packages: Record<string, { resolved?: string; inBundle?: boolean }>;
    };
    const dhvPackages = Object.entries(lock.packages).filter(([path]) => /node_modules\/@dhv\//.test(path));
    expect(dhvPackages.length).toBeGreaterThan(0);
    const fromRegistry = dhvPackages
      .filter(([, entry]) => !entry.inBundle && !entry.resolved?.startsWith('file:'))
      .map(([path, entry]) => `${path} ${entry.resolved}`);
    expect(fromRegistry).toEqual([]);
  });
});

// After every test above: it removes the install they all use, the one the README's section made.
describe('dhv-harness-<version>.tgz, installed as the README says, once every test above has used it', () => {
  it('is removed by npm rm -g @dhv/harness, the name its file says', async () => {
    const prefix = runPrefix(run);
    expect(await fs.pathExists(join(prefix, 'bin/dhv'))).toBe(true);
    const removed = await execa('npm', ['rm', '-g', '@dhv/harness'], {
      cwd: join(work, 'host'),
      env: { ...userEnv, npm_config_prefix: prefix, npm_config_cache: join(work, 'other-cache') },
      extendEnv: false,
      reject: false,
    });
    expect(removed.exitCode, removed.stderr).toBe(0);
    expect(removed.stdout).toMatch(/removed \d+ package/);
    expect(await fs.pathExists(join(prefix, 'bin/dhv'))).toBe(false);
    expect(await fs.pathExists(join(prefix, 'lib/node_modules/@dhv/harness'))).toBe(false);
  });
});

describe.concurrent('the packages as they would be published', () => {
  it('each passes npm publish --dry-run without npm correcting its manifest', async () => {
    // One npm for the four workspaces: it publishes (here, dry) each in turn, as four runs of it would.
    const names = ['@dhv/sdk', '@dhv/harness', '@dhv/plugin-mkdir', '@dhv/plugin-loopback'];
    const result = await execa(
      'npm',
      ['publish', '--dry-run', '--ignore-scripts', ...names.flatMap((name) => ['-w', name])],
      { cwd: REPO_ROOT, env: { ...userEnv, npm_config_update_notifier: 'false' }, extendEnv: false, reject: false },
    );
    expect(result.exitCode, `${names.join(', ')}: ${result.stderr}`).toBe(0);
    for (const name of names) expect(result.stdout, name).toContain(`+ ${name}@0.1.0`);
    expect(result.stderr).not.toMatch(/auto-corrected|npm warn (?!publish This command requires you to be logged in)/);
  });
});
