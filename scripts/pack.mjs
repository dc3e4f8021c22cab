#!/usr/bin/env node
// Makes dhv-<version>.tgz: the dhv CLI (@dhv/harness) with every dependency, @dhv/sdk
// included, bundled inside it, so that `npm install -g ./dhv-<version>.tgz` needs no
// registry, as an operator installs Nomad itself on an air-gapped host.
//
//   node scripts/pack.mjs [--out <dir>]      (npm run pack: builds first; default out: the repo root)
//
// Prints the tarball's path on stdout. The dependencies are the ones npm resolves now
// (from its cache first), for this machine's platform: esbuild's native binary is the
// one of the machine that packs.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
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

const readJson = (path) => JSON.parse(readFileSync(path, 'utf8'));
const writeJson = (path, value) => writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);

mkdirSync(out, { recursive: true });
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

const work = mkdtempSync(join(tmpdir(), 'dhv-pack-'));
try {
  const packed = JSON.parse(
    npm(
      ['pack', '-w', '@dhv/sdk', '-w', '@dhv/harness', '--pack-destination', work, '--json', '--ignore-scripts'],
      repo,
    ),
  );
  const tarball = (name) => join(work, packed.find((entry) => entry.name === name).filename);

  // The harness as npm would publish it, then its dependencies installed beside it.
  const stage = join(work, 'package');
  const untar = spawnSync('tar', ['-xzf', tarball('@dhv/harness'), '-C', work], { encoding: 'utf8' });
  if (untar.status !== 0) throw new Error(`tar: ${untar.stderr}`);
  const manifestPath = join(stage, 'package.json');
  const manifest = readJson(manifestPath);
  const sdkRange = manifest.dependencies['@dhv/sdk'];
  writeJson(manifestPath, {
    ...manifest,
    dependencies: { ...manifest.dependencies, '@dhv/sdk': `file:${tarball('@dhv/sdk')}` },
  });
  npm(['install', '--omit=dev', '--ignore-scripts', '--no-package-lock', '--install-links', '--prefer-offline'], stage);
  withoutInstallScripts(join(stage, 'node_modules', 'esbuild', 'package.json'));

  // Every dependency travels inside the tarball; the SDK's range goes back to the one
  // the published package names, which its bundled copy satisfies.
  writeJson(manifestPath, {
    ...manifest,
    dependencies: { ...manifest.dependencies, '@dhv/sdk': sdkRange },
    bundleDependencies: Object.keys(manifest.dependencies).sort(),
  });
  rmSync(join(stage, 'node_modules', '.package-lock.json'), { force: true });
  cpSync(join(repo, 'LICENSE'), join(stage, 'LICENSE'));

  const [result] = JSON.parse(npm(['pack', stage, '--pack-destination', work, '--json', '--ignore-scripts'], work));
  const target = join(out, `dhv-${manifest.version}.tgz`);
  renameSync(join(work, result.filename), target);
  process.stdout.write(`${target}\n`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
