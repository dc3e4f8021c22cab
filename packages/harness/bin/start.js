// CommonJS (bin/package.json): Node's own modules without an ES module's facades (bin/cli-files.cjs).
const { existsSync, readFileSync } = require('node:fs');
const { join } = require('node:path');
const {
  BUNDLE_FILE,
  ROOT,
  buildStamp,
  distEntry,
  maybeWsl,
  moduleInBundle,
  readManifest,
  userAgent,
} = require('./cli-files.cjs');
const { loadBundle } = require('./load-bundle.cjs');

const VERSION_FLAGS = new Set(['--version', '-v']);

// Set aside by run.js's launcher line: the programs dhv runs (npm) get it back.
if (process.env.DHV_NODE_EXTRA_CA_CERTS !== undefined) {
  process.env.NODE_EXTRA_CA_CERTS = process.env.DHV_NODE_EXTRA_CA_CERTS;
  delete process.env.DHV_NODE_EXTRA_CA_CERTS;
}

/**
 * dhv runs from its bundle (dist/cli/<id>/, made by the build with the manifest that points
 * at it): oclif loads only the module of the command that runs, and the manifest carries
 * every command's help. A command with a lean bundle of its own (all but help; bin/build-cli.mjs)
 * runs from it, without oclif, when bin/lite-oclif.mjs reads its command line as oclif
 * would. Without a usable bundle dhv runs the compiled files as they are, from the explicit
 * list in package.json (dist/commands/index.js, which imports them all).
 */
async function start() {
  const pjson = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  const manifest = await currentBundle();
  if (manifest === undefined) {
    const { execute } = await import('@oclif/core');
    return execute({ loadOptions: { root: ROOT, pjson } });
  }
  const argv = process.argv.slice(2);
  // oclif's answer to `dhv --version` alone, without oclif.
  if (argv.length === 1 && VERSION_FLAGS.has(argv[0]) && !maybeWsl())
    return void process.stdout.write(`${userAgent(pjson)}\n`);
  // DHV_LEAN=0: every command through oclif (to tell the lean start-up's doing from a command's).
  const lean = process.env.DHV_LEAN === '0' ? undefined : leanCommand(manifest, argv);
  if (lean === undefined) return runBundle(manifest.dhvCli, pjson);
  const { command, nomadSpelling, runLean } = loadBundle(join(ROOT, manifest.dhvCli, lean.module), { shared: false });
  return runLean({
    command,
    id: lean.id,
    argv: argv.slice(lean.id.split(':').length),
    pjson,
    nomadSpelling,
    fallBack: () => runBundle(manifest.dhvCli, pjson),
  });
}

/**
 * The lean bundle of the command `argv` names, if it has one: its id, topics joined by `:`
 * as oclif joins them, and its module in the bundle's folder.
 */
function leanCommand(manifest, argv) {
  const lean = manifest.dhvLean ?? {};
  for (let words = Math.min(argv.length, 3); words > 0; words--) {
    const id = argv.slice(0, words).join(':');
    if (Object.hasOwn(lean, id) && manifest.commands[id] !== undefined) return { id, module: lean[id] };
  }
  return undefined;
}

/** oclif, from the bundle, given the manifest with the bundle's commands and hooks. */
async function runBundle(cli, pjson) {
  const { execute } = loadBundle(join(ROOT, cli, BUNDLE_FILE));
  const inBundle = (path) => `./${cli}/${moduleInBundle(distEntry(path))}`;
  const hooks = Object.fromEntries(
    Object.entries(pjson.oclif.hooks ?? {}).map(([event, paths]) => [event, [paths].flat().map(inBundle)]),
  );
  const oclif = { ...pjson.oclif, commands: { strategy: 'pattern', target: `./${cli}/commands` }, hooks };
  return execute({ loadOptions: { root: ROOT, pjson: { ...pjson, oclif } } });
}

/**
 * The manifest, when the bundle it points at is there and was made from the compiled
 * packages as they are now; else made again now (a `tsc -b` since the last build). An
 * installed package has no build info and trusts the bundle it was packed with.
 */
async function currentBundle() {
  const stamp = buildStamp();
  const manifest = readManifest();
  const made = manifest?.dhvCli && existsSync(join(ROOT, manifest.dhvCli, BUNDLE_FILE));
  if (made && (stamp === undefined || manifest.dhvBuild === stamp)) return manifest;
  if (stamp === undefined) return undefined;
  const { buildCli } = await import('./build-cli.mjs');
  return buildCli().catch(() => undefined);
}

module.exports = { start };
