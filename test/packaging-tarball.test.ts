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
  writeStandIns,
  type BlockRun,
  type SectionResult,
} from './support/docs-blocks.js';
import { REPO_ROOT, tempDir, removeTempDir } from './support/kit.js';

/**
 * The one-file install, as the README's *Install* section says it, run as written (the docs
 * runner, test/support/docs-blocks.ts): `npm ci && npm run pack` in a copy of the checkout
 * makes dhv-<version>.tgz; in an empty folder beside it (another host), `npm install -g` of
 * that file alone, into an empty prefix with an empty npm cache and the registry unreachable,
 * gives a working `dhv`, whose `dhv init` makes a project that installs, builds and passes
 * `dhv check` outside any checkout. That project installs no @dhv/* package from the
 * registry: its own dev tools (typescript, vitest, @types/node) and the SDK's zod do come
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
describe.concurrent('dhv-<version>.tgz, as the README installs it, with no registry', () => {
  it("runs the README's Install section as written: pack, npm install -g, dhv init, npm install, build, check", () => {
    expect(INSTALL.map((b) => b.text).join('\n')).toMatch(/npm run pack[\s\S]*npm install -g \.\/dhv-0\.1\.0\.tgz/);
    expectSectionsRan(sections, INSTALL, expect);
    const output = sections.map((s) => s.output).join('\n');
    expect(output).toMatch(/^@dhv\/harness\/0\.1\.0 /m);
    expect(output).toMatch(/^OK: no required check failed/m);
  });

  it('is named dhv-<version>.tgz and installs with npm install -g, with no install script to allow', async () => {
    expect(await fs.pathExists(join(run.checkout, 'dhv-0.1.0.tgz'))).toBe(true);
    expect(await fs.pathExists(join(work, 'host/dhv-0.1.0.tgz'))).toBe(true);
    expect(sections.map((s) => s.output).join('\n')).not.toMatch(ALLOW_SCRIPTS_WARNING);
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
  }, 180_000);

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

describe.concurrent('the packages as they would be published', () => {
  it('each passes npm publish --dry-run without npm correcting its manifest', async () => {
    const publish = (name: string) =>
      execa('npm', ['publish', '--dry-run', '--ignore-scripts', '-w', name], {
        cwd: REPO_ROOT,
        env: { ...userEnv, npm_config_update_notifier: 'false' },
        extendEnv: false,
        reject: false,
      }).then((result) => ({ name, result }));
    const names = ['@dhv/sdk', '@dhv/harness', '@dhv/plugin-mkdir', '@dhv/plugin-loopback'];
    for (const { name, result } of await Promise.all(names.map(publish))) {
      expect(result.exitCode, `${name}: ${result.stderr}`).toBe(0);
      expect(result.stdout, name).toContain(`+ ${name}@0.1.0`);
      expect(result.stderr, name).not.toMatch(
        /auto-corrected|npm warn (?!publish This command requires you to be logged in)/,
      );
    }
  }, 180_000);
});
