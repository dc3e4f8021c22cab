import { join } from 'node:path';
import { execa } from 'execa';
import fs from 'fs-extra';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, tempDir, removeTempDir } from './support/kit.js';

/**
 * The one-file install of the README's *Install* section: `npm run pack` makes
 * dhv-<version>.tgz, and `npm install -g` of that file alone, into an empty prefix with an
 * empty npm cache and the registry unreachable, gives a working `dhv`. A project made by
 * that `dhv init`, outside any checkout, installs no @dhv/* package from the registry: its
 * own dev tools (typescript, vitest, @types/node) and the SDK's zod do come from the npm
 * cache or registry, as they would for any TypeScript project.
 *
 * The tarball is packed and installed once, and every test below uses that install.
 */

/** The environment of a user's shell: none of vitest's or npm run's settings. */
const userEnv = {
  ...Object.fromEntries(
    Object.entries(process.env).filter(
      ([key]) => !/^(npm_|VITEST|NODE_OPTIONS$|NODE_ENV$|FORCE_COLOR$|DHV_)/i.test(key),
    ),
  ),
  NO_COLOR: '1',
  npm_config_audit: 'false',
  npm_config_fund: 'false',
  npm_config_update_notifier: 'false',
};

/** Nothing listens on port 9 (discard): every registry request fails at once. */
const airGapped = { npm_config_registry: 'http://127.0.0.1:9', npm_config_fetch_retries: '0' };

const ALLOW_SCRIPTS_WARNING = /not yet covered by allowScripts/;

let work: string;
let tarball: string;
let dhvBin: string;
let globalInstall: { exitCode?: number; stdout: string; stderr: string };

const dhv = (args: string[], cwd = work) => execa(dhvBin, args, { cwd, env: userEnv, extendEnv: false, reject: false });

beforeAll(async () => {
  work = await tempDir('packaging-tarball');
  const packed = await execa(process.execPath, [join(REPO_ROOT, 'scripts/pack.mjs'), '--out', work], {
    env: userEnv,
    extendEnv: false,
  });
  tarball = packed.stdout.trim();
  const prefix = join(work, 'prefix');
  globalInstall = await execa('npm', ['install', '-g', '--prefix', prefix, tarball], {
    cwd: work,
    env: { ...userEnv, ...airGapped, npm_config_cache: join(work, 'empty-npm-cache') },
    extendEnv: false,
    reject: false,
  });
  dhvBin = join(prefix, 'bin/dhv');
}, 300_000);

afterAll(async () => {
  await removeTempDir(work);
}, 60_000);

// The tests share only the install, which none of them changes: they run side by side.
describe.concurrent('dhv-<version>.tgz, installed alone with no registry', () => {
  it('is named dhv-<version>.tgz and installs with npm install -g, with no install script to allow', () => {
    expect(tarball).toBe(join(work, 'dhv-0.1.0.tgz'));
    expect(globalInstall.exitCode, globalInstall.stderr).toBe(0);
    expect(globalInstall.stderr).not.toMatch(ALLOW_SCRIPTS_WARNING);
  });

  it('runs dhv --version and dhv help volume create', async () => {
    const version = await dhv(['--version']);
    expect(version.exitCode, version.stderr).toBe(0);
    expect(version.stdout).toMatch(/^@dhv\/harness\/0\.1\.0 /);
    const help = await dhv(['help', 'volume', 'create']);
    expect(help.exitCode, help.stderr).toBe(0);
    expect(help.stdout).toMatch(/^USAGE\n\s+\$ dhv volume create SPEC/m);
  });

  it('runs dhv demo with the reference plugins that came inside the tarball', async () => {
    const demo = await dhv(['demo', '--json']);
    expect(demo.exitCode, demo.stderr).toBe(0);
    expect(JSON.parse(demo.stdout)).toMatchObject({ ok: true, leftBehind: [] });
  }, 180_000);

  it('makes a project with dhv init whose npm install takes no @dhv/* from the registry, and that builds and passes dhv check', async () => {
    const init = await dhv(['init', 'my-plugin']);
    expect(init.exitCode, init.stderr).toBe(0);
    const project = join(work, 'my-plugin');
    expect(await fs.readFile(join(project, '.gitignore'), 'utf8')).toMatch(/^\.dhv\/$/m);

    const npm = (args: string[]) =>
      execa('npm', [...args, '--prefer-offline'], { cwd: project, env: userEnv, extendEnv: false, reject: false });
    const install = await npm(['install']);
    expect(install.exitCode, install.stderr).toBe(0);
    expect(install.stderr).not.toMatch(ALLOW_SCRIPTS_WARNING);
    const lock = (await fs.readJson(join(project, 'package-lock.json'))) as {
      packages: Record<string, { resolved?: string; inBundle?: boolean }>;
    };
    const fromRegistry = Object.entries(lock.packages)
      .filter(([path, entry]) => /node_modules\/@dhv\//.test(path) && !entry.inBundle)
      .filter(([, entry]) => !entry.resolved?.startsWith('file:'))
      .map(([path, entry]) => `${path} ${entry.resolved}`);
    expect(fromRegistry).toEqual([]);

    const build = await npm(['run', 'build']);
    expect(build.exitCode, build.stderr).toBe(0);
    const check = await npm(['run', 'check']);
    expect(check.exitCode, `${check.stdout}\n${check.stderr}`).toBe(0);
    expect(check.stdout).toMatch(/^OK: no required check failed$/m);
  }, 300_000);
});

describe.concurrent('the packages as they would be published', () => {
  it('each passes npm publish --dry-run without npm correcting its manifest', async () => {
    for (const name of ['@dhv/sdk', '@dhv/harness', '@dhv/plugin-mkdir', '@dhv/plugin-loopback']) {
      const publish = await execa('npm', ['publish', '--dry-run', '--ignore-scripts', '-w', name], {
        cwd: REPO_ROOT,
        env: userEnv,
        extendEnv: false,
        reject: false,
      });
      expect(publish.exitCode, `${name}: ${publish.stderr}`).toBe(0);
      expect(publish.stdout, name).toContain(`+ ${name}@0.1.0`);
      expect(publish.stderr, name).not.toMatch(
        /auto-corrected|npm warn (?!publish This command requires you to be logged in)/,
      );
    }
  }, 180_000);
});
