// Where dhv's built CLI lives and what bin/start.js reads before it loads any bundle: the
// manifest, the build stamp, oclif's user agent. CommonJS, so that a start imports Node's
// own modules without their ES module facades (the one of node:fs alone loads Node's
// streams); bin/build-cli.mjs, which writes these files, takes its names from here.
'use strict';
const { readFileSync, statSync } = require('node:fs');
const { release } = require('node:os');
const { join } = require('node:path');

const ROOT = join(__dirname, '..');
/** The oclif manifest, beside package.json: every command's help, and which bundle runs. */
const MANIFEST = join(ROOT, 'oclif.manifest.json');
/**
 * tsc -b rewrites a package's build info whenever it compiles it: the manifest remembers
 * which compiles of the harness and of the SDK it bundles (in the workspace, beside it).
 */
const BUILD_INFO = [join(ROOT, 'tsconfig.tsbuildinfo'), join(ROOT, '..', 'sdk', 'tsconfig.tsbuildinfo')];
/** The bundle's one file (bin/load-bundle.cjs loads it). */
const BUNDLE_FILE = 'cli.cjs';
/**
 * Where bin/load-bundle.cjs leaves the bundle it loaded (a global symbol), for the command
 * and hook modules: oclif reads the manifest again, and a dhv building meanwhile may have
 * pointed it at a newer bundle, whose own copy of oclif would not know this one's errors.
 */
const LOADED_BUNDLE = 'dhv.loadedBundle';

/** What identifies one compile of the packages, or undefined outside a source tree (an installed package). */
function buildStamp() {
  const [harness, sdk] = BUILD_INFO.map((path) => statSync(path, { throwIfNoEntry: false }));
  if (!harness) return undefined;
  return [harness, sdk].map((info) => (info ? `${info.mtimeMs}:${info.size}` : '-')).join(' ');
}

/** The manifest as it is, or null without one. */
function readManifest() {
  try {
    return JSON.parse(readFileSync(MANIFEST, 'utf8'));
  } catch {
    return null;
  }
}

/** The package's own file for an oclif path in package.json (`./dist/hooks/x.js`), relative to dist/, without `.js`. */
function distEntry(path) {
  const relative = path.replace(/^\.\//, '');
  if (!relative.startsWith('dist/') || !relative.endsWith('.js'))
    throw new Error(`${path}: an oclif module of dhv must be a compiled file under dist/`);
  return relative.slice('dist/'.length, -'.js'.length);
}

/** The module oclif loads for the compiled `dist/<file>.js`, as a path in the bundle's folder. */
function moduleInBundle(file) {
  return `${file}.cjs`;
}

/** A lean command's bundle (bin/build-cli.mjs, leanCommands), as a path in the bundle's folder. */
function leanModule(id) {
  return `lean/${id.split(':').join('-')}.cjs`;
}

/** oclif names Linux under WSL `wsl`; its own test (is-wsl) is left to oclif. */
function maybeWsl() {
  return process.platform === 'linux' && /microsoft/i.test(release());
}

/** oclif's user agent, what `dhv --version` prints: `<name>/<version> <platform>-<arch> node-<version>`. */
function userAgent(pjson) {
  const arch = process.arch === 'ia32' ? 'x86' : process.arch;
  return `${pjson.name}/${pjson.version} ${process.platform}-${arch} node-${process.version}`;
}

module.exports = {
  ROOT,
  MANIFEST,
  BUNDLE_FILE,
  LOADED_BUNDLE,
  buildStamp,
  readManifest,
  distEntry,
  moduleInBundle,
  leanModule,
  maybeWsl,
  userAgent,
};
