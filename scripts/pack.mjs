#!/usr/bin/env node
// Makes dhv-harness-<version>.tgz: the dhv CLI (@dhv/harness) with every dependency, @dhv/sdk
// included, and the reference plugins dhv demo runs, bundled inside it, so that
// `npm install -g ./dhv-harness-<version>.tgz` needs no registry, as an operator installs
// Nomad itself on an air-gapped host. Its name is the one npm pack gives @dhv/harness, so
// the file says the package `npm rm -g @dhv/harness` removes and a newer file upgrades.
// Beside it, dhv-sdk-<version>.tgz: @dhv/sdk alone, for a program that only execs plugins.
//
//   node scripts/pack.mjs [--out <dir>]      (npm run pack: builds first; default out: the repo root)
//
// Prints the tarballs' paths on stdout. The dependencies are the ones npm resolves now
// (from its cache first), for this machine's platform: esbuild's native binary is the
// one of the machine that packs.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('..', import.meta.url));
const outIndex = process.argv.indexOf('--out');
const out = resolve(outIndex === -1 ? repo : process.argv[outIndex + 1]);

// npm settings inherited from `npm run` (workspace, prefix, cache) would redirect the commands below.
const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key)));
const quiet = ['--loglevel=error', '--no-audit', '--no-fund'];

function npm(args, cwd) {
  const run = spawnSync('npm', [...args, ...quiet], { cwd, env, encoding: 'utf8' });
  if (run.status !== 0) {
    process.stderr.write(run.stderr || run.stdout || `npm ${args.join(' ')} failed\n`);
    process.exit(1);
  }
  return run.stdout;
}

/** The harness first; then what travels inside it: the SDK, and the plugins `dhv demo` runs. */
const PACKAGES = ['@dhv/harness', '@dhv/sdk', '@dhv/plugin-mkdir', '@dhv/plugin-loopback'];
const REFERENCE_PLUGINS_AT = (version) => ({ '@dhv/plugin-mkdir': version, '@dhv/plugin-loopback': version });

const readJson = (path) => JSON.parse(readFileSync(path, 'utf8'));
const writeJson = (path, value) => writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);

/**
 * esbuild's postinstall only checks its binary and hard-links it over its JS shim (which
 * `npm pack` then drops). Its bundled @esbuild/<platform> package works without it, and
 * without it no install of the tarball runs a script or asks for allowScripts.
 */
function withoutInstallScripts(manifestPath) {
  const manifest = readJson(manifestPath);
  for (const hook of ['preinstall', 'install', 'postinstall']) delete manifest.scripts?.[hook];
  writeJson(manifestPath, manifest);
}

mkdirSync(out, { recursive: true });
const work = mkdtempSync(join(tmpdir(), 'dhv-pack-'));
try {
  const packed = JSON.parse(
    npm(
      ['pack', ...PACKAGES.flatMap((name) => ['-w', name]), '--pack-destination', work, '--json', '--ignore-scripts'],
      repo,
    ),
  );
  const tarball = (name) => join(work, packed.find((entry) => entry.name === name).filename);

  // The harness as npm would publish it, then its dependencies installed beside it.
  const stage = join(work, 'package');
  const untar = spawnSync('tar', ['-xzf', tarball('@dhv/harness'), '-C', work], { encoding: 'utf8' });
  if (untar.status !== 0) throw new Error(`tar: ${untar.stderr}`);
  // Only the bundle of this build runs (the build keeps the one before it for a dhv still running).
  const { dhvCli } = readJson(join(stage, 'oclif.manifest.json'));
  for (const bundle of readdirSync(join(stage, 'dist', 'cli')))
    if (join('dist', 'cli', bundle) !== join(dhvCli)) rmSync(join(stage, 'dist', 'cli', bundle), { recursive: true });
  const manifestPath = join(stage, 'package.json');
  const manifest = readJson(manifestPath);
  const local = Object.fromEntries(PACKAGES.slice(1).map((name) => [name, `file:${tarball(name)}`]));
  writeJson(manifestPath, { ...manifest, dependencies: { ...manifest.dependencies, ...local } });
  npm(['install', '--omit=dev', '--ignore-scripts', '--no-package-lock', '--install-links', '--prefer-offline'], stage);
  withoutInstallScripts(join(stage, 'node_modules', 'esbuild', 'package.json'));

  // Every dependency travels inside the tarball, named by the version of its bundled copy.
  const dependencies = { ...manifest.dependencies, ...REFERENCE_PLUGINS_AT(manifest.version) };
  writeJson(manifestPath, { ...manifest, dependencies, bundleDependencies: Object.keys(dependencies).sort() });
  rmSync(join(stage, 'node_modules', '.package-lock.json'), { force: true });

  const [result] = JSON.parse(npm(['pack', stage, '--pack-destination', work, '--json', '--ignore-scripts'], work));
  const target = join(out, result.filename);
  // Copied, not renamed: the temp dir and the target are often on different filesystems (EXDEV).
  copyFileSync(join(work, result.filename), target);
  const sdk = join(out, packed.find((entry) => entry.name === '@dhv/sdk').filename);
  copyFileSync(tarball('@dhv/sdk'), sdk);
  process.stdout.write(`${target}\n${sdk}\n`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
