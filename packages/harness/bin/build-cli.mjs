// The dhv CLI as it runs: the compiled commands bundled by esbuild into dist/cli/<id>/, and
// the oclif manifest (oclif.manifest.json beside package.json) that points oclif at them.
//
// The bundle is one CommonJS file, dist/cli/<id>/cli.cjs: oclif's entry (dist/cli.js) and
// every command and hook, each command's code run only when it is asked for. Beside it,
// commands/<topic>/<name>.cjs and hooks/<name>.cjs, one line each, are what oclif loads:
// each asks the bundle for its own command or hook. One file, not ~400 modules, and one
// that V8 can keep compiled (bin/load-bundle.cjs). The manifest carries every command's
// flags, args and help, so `dhv <command>` runs only that command's code and `dhv help` none.
//
// Written by the build (`npm run build`, after tsc). bin/run.js writes both again when the
// compiled packages are newer than the manifest (a `tsc -b` without the rest of the build),
// so what runs is never stale.
import { mkdir, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative as relativePath } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import {
  BUNDLE_FILE,
  LOADED_BUNDLE,
  MANIFEST,
  ROOT,
  buildStamp,
  distEntry,
  leanModule,
  moduleInBundle,
  readManifest,
} from './cli-files.cjs';

const DIST = join(ROOT, 'dist');
const COMMANDS_DIR = ['dist', 'commands'];
const BUNDLES = ['dist', 'cli'];
/**
 * Loaded as they are, not bundled: esbuild (a native binary beside its JS) and postject
 * (wasm) for `dhv build`, fast-check (large) for `dhv check --explore`, and typescript,
 * which oclif only looks for in a project that runs commands from .ts sources.
 */
const EXTERNAL = ['esbuild', 'postject', 'fast-check', 'typescript', '@cdktn/hcl2json'];
/**
 * oclif requires semver only to warn when Node is older than its engines, reading its own
 * package.json beside `__dirname`, which a bundle (ES modules) does not have: the check
 * cannot run here, so semver (70 KB that every dhv would parse and run) is left out.
 * npm checks dhv's own engines at install.
 */
const withoutSemver = {
  name: 'dhv-without-semver',
  setup(b) {
    b.onResolve({ filter: /^semver$/ }, () => ({ path: 'semver', namespace: 'dhv-left-out' }));
    b.onLoad({ filter: /.*/, namespace: 'dhv-left-out' }, () => ({ contents: 'module.exports = {};' }));
  },
};

/**
 * The bundle runs from V8's code cache (bin/load-bundle.cjs), where Node 20 cannot take an
 * `import()` (it fails, "A dynamic import callback was not specified"). So the bundle has
 * none: esbuild writes each `import()` of its own code as a `require()` (`supported`
 * below), and oclif's, which load ES modules from other packages (an ES module plugin such
 * as @oclif/plugin-autocomplete, tsx for a TypeScript project), call `__dhvImport`, a real
 * `import()` that bin/load-bundle.cjs passes in from outside the cached code (BANNER).
 */
const IMPORT_CALL = /\bimport\((?!\))/g;
const importsFromOutside = {
  name: 'dhv-imports-from-outside',
  setup(b) {
    b.onLoad({ filter: /[\\/]node_modules[\\/](@oclif[\\/]core|lilconfig)[\\/].*\.js$/ }, async (args) => ({
      contents: (await readFile(args.path, 'utf8')).replace(IMPORT_CALL, '__dhvImport('),
      loader: 'js',
    }));
  },
};

/**
 * The bundle's first line: what createRequire(import.meta.url) resolves from (the bundle's
 * place), and `__dhvImport`: bin/load-bundle.cjs's, or, when the bundle is required as it is
 * (a command module of a newer bundle than the one this dhv loaded, a rebuild having
 * rewritten the manifest meanwhile), Node's own, which works outside the code cache.
 */
const BANNER =
  "const __dhvBundleUrl = require('node:url').pathToFileURL(__filename).href;" +
  "const __dhvImport = typeof __dhvImportOutside === 'function' ? __dhvImportOutside : (specifier) => import(specifier);";

/** Fails the build when an `import()` is left in the bundle (see importsFromOutside). */
function assertNoImportCall(source, file) {
  const at = source.search(IMPORT_CALL);
  if (at === -1) return;
  const line = source.slice(0, at).split('\n').length;
  throw new Error(`${file}:${line}: the bundle has an import() call, which fails when run from V8's code cache`);
}

/**
 * The manifest oclif makes in memory from the explicit list (dist/commands/index.js), each
 * command then pointed at its own entry in the bundle, `<bundle>/commands/<topic>/<name>.js`,
 * bundled from `dist/commands/<topic>/<name>.js`: that module's default export must be the
 * very class the list holds, or the build fails.
 */
async function makeManifest(pjson) {
  const { Plugin } = await import('@oclif/core');
  const plugin = new Plugin({ root: ROOT, isRoot: true, pjson, ignoreManifest: true, errorOnManifestCreate: true });
  await plugin.load();
  const { COMMANDS } = await import(pathToFileURL(join(ROOT, ...COMMANDS_DIR, 'index.js')).href);
  const commands = {};
  for (const [id, cached] of Object.entries(plugin.manifest.commands)) {
    const relativePath = [...COMMANDS_DIR, ...id.split(':')];
    relativePath[relativePath.length - 1] += '.js';
    const module = await import(pathToFileURL(join(ROOT, ...relativePath)).href).catch(() => ({}));
    if (module.default !== COMMANDS[id])
      throw new Error(`command ${id}: ${relativePath.join('/')} must export as default the class COMMANDS lists`);
    commands[id] = { ...cached, relativePath };
  }
  return { commands, version: plugin.version };
}

/**
 * Commands that run only through oclif: help (oclif's own help class), and the author's
 * commands, whose start-up is a small part of the seconds they take (init, build, demo,
 * record, replay) and whose bundles are the largest. Every other command also gets a lean
 * bundle of its own: its code and bin/lite-oclif.mjs in place of @oclif/core (the Command
 * base class, Flags, Args and a parser). bin/start.js runs one when the command line names
 * it and lite-oclif reads that line as oclif would; else the main bundle runs, through oclif,
 * whose start-up costs each run about 0.05 s of CPU more (bench/cli-start.bench.mjs). One
 * bundle for every lean command would be smaller, but each command loaded 20 ms slower from
 * it than from its own (esbuild wraps every module a lazily required command reaches). A
 * command that asks @oclif/core for more than lite-oclif has fails the build.
 */
const THROUGH_OCLIF = new Set(['help', 'init', 'build', 'demo', 'record', 'replay']);
const leanCommands = (commands) => Object.keys(commands).filter((id) => !THROUGH_OCLIF.has(id));
const LITE_OCLIF = join(ROOT, 'bin', 'lite-oclif.mjs');
/**
 * Node's own modules that cost a lean command milliseconds to load (Node compiles them when
 * first required) and that most runs never use: `spawn` for a plugin, `randomUUID` for a
 * new ID. In a lean bundle each is required on first use (lazyBuiltins).
 */
const LAZY_BUILTINS =
  /^var (import_\w+) = require\("(node:(?:crypto|child_process|net|async_hooks|timers\/promises|fs\/promises|stream|readline|worker_threads|zlib|http|https|tls|dns|v8|perf_hooks))"\);$/gm;
const LAZY_BANNER =
  'const __dhvLazy = (id) => { let loaded; return new Proxy({}, { get: (_, key) => (loaded ??= require(id))[key] }); };';

/**
 * esbuild writes a named import of Node's module as `var import_x = require("node:x");`
 * and each use as `import_x.name`: the require moves into the first use, one line for one.
 */
function lazyBuiltins(source) {
  return source.replace(LAZY_BUILTINS, (_, name, id) => `var ${name} = __dhvLazy(${JSON.stringify(id)});`);
}
const NOMAD_SPELLING = './commands/volume/nomad-flags.js';

/**
 * Bundles oclif's `execute`, the commands (`commands`: id → file under dist/) and the hooks
 * (`hooks`: oclif path → file under dist/) into one CommonJS file in a new directory under
 * dist/cli/, beside one small module per command and hook that oclif loads, each asking the
 * bundle this dhv loaded (else its own) for its command or hook. Each command's code runs
 * only when its module is loaded. Returns the directory's path from ROOT.
 */
async function bundle(commands, hooks) {
  const { build } = await import('esbuild');
  const id = `${Date.now().toString(36)}-${process.pid}`;
  const relative = [...BUNDLES, id];
  const temp = join(ROOT, ...BUNDLES, `.${id}.tmp`);
  const lazy = (files) =>
    `{\n${Object.entries(files)
      .map(([key, file]) => `  ${JSON.stringify(key)}: () => require(${JSON.stringify(`./${file}.js`)}).default,`)
      .join('\n')}\n}`;
  const common = {
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    // tsc's maps are read in, so the bundle's map to src/ (for --enable-source-maps).
    sourcemap: 'linked',
    sourcesContent: false,
    external: EXTERNAL,
    // createRequire(import.meta.url) resolves packages from the bundle's place.
    define: { 'import.meta.url': '__dhvBundleUrl' },
    banner: { js: BANNER },
    supported: { 'dynamic-import': false },
    logLevel: 'error',
  };
  try {
    await build({
      ...common,
      stdin: {
        contents: `export { execute } from './cli.js';\nexport const commands = ${lazy(commands)};\nexport const hooks = ${lazy(hooks)};\n`,
        resolveDir: DIST,
        sourcefile: 'dhv-cli.js',
        loader: 'js',
      },
      outfile: join(temp, BUNDLE_FILE),
      plugins: [withoutSemver, importsFromOutside],
    });
    assertNoImportCall((await readFile(join(temp, BUNDLE_FILE), 'utf8')).slice(BANNER.length), BUNDLE_FILE);
    for (const commandId of leanCommands(commands)) {
      const file = commands[commandId];
      await build({
        ...common,
        stdin: {
          contents:
            `export { default as command } from './${file}.js';\n` +
            `export { nomadSpelling } from '${NOMAD_SPELLING}';\n` +
            `export { runLean } from ${JSON.stringify(LITE_OCLIF)};\n`,
          resolveDir: DIST,
          sourcefile: `dhv-${commandId.split(':').join('-')}.js`,
          loader: 'js',
        },
        outfile: join(temp, leanModule(commandId)),
        // Each command's copy of the code it shares with the others costs the package less;
        // names in a stack trace stay (DHV_LEAN=0 runs the command from the main bundle).
        minify: true,
        keepNames: true,
        alias: { '@oclif/core': LITE_OCLIF },
        banner: { js: BANNER + LAZY_BANNER },
        plugins: [],
      });
      const lean = await readFile(join(temp, leanModule(commandId)), 'utf8');
      assertNoImportCall(lean.slice(BANNER.length), leanModule(commandId));
      await writeFile(join(temp, leanModule(commandId)), lazyBuiltins(lean));
    }
    const stub = async (path, kind, key, exported) => {
      const own = relativePath(dirname(join(temp, path)), join(temp, BUNDLE_FILE)).replace(/^(?!\.)/, './');
      await mkdir(dirname(join(temp, path)), { recursive: true });
      await writeFile(
        join(temp, path),
        `const loaded = globalThis[Symbol.for(${JSON.stringify(LOADED_BUNDLE)})]?.${kind}[${JSON.stringify(key)}];\n` +
          `${exported} = (loaded ?? require(${JSON.stringify(own)}).${kind}[${JSON.stringify(key)}])();\n`,
      );
    };
    for (const [commandId, file] of Object.entries(commands))
      await stub(moduleInBundle(file), 'commands', commandId, 'module.exports');
    for (const [hook, file] of Object.entries(hooks))
      await stub(moduleInBundle(file), 'hooks', hook, 'exports.default');
    // Renamed whole, so a dhv starting meanwhile never sees half a bundle.
    await rename(temp, join(ROOT, ...relative));
  } finally {
    await rm(temp, { recursive: true, force: true });
  }
  return relative.join('/');
}

/**
 * Bundles the compiled CLI and writes the manifest that points at it, by rename, so a dhv
 * starting meanwhile reads the old one or the new one whole. The bundles it replaced stay
 * (a dhv still running may yet load a chunk of its own) until `removeOtherBundles`.
 */
export async function buildCli() {
  const pjson = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8'));
  const dhvBuild = buildStamp();
  const { commands, version } = await makeManifest(pjson);
  const commandFiles = Object.fromEntries(
    Object.entries(commands).map(([id, command]) => [id, distEntry(command.relativePath.join('/'))]),
  );
  const hookFiles = {};
  for (const hooks of Object.values(pjson.oclif.hooks ?? {}))
    for (const hook of [hooks].flat()) hookFiles[hook] = distEntry(hook);
  const cli = await bundle(commandFiles, hookFiles);
  for (const [id, command] of Object.entries(commands)) {
    command.relativePath = [...cli.split('/'), ...moduleInBundle(commandFiles[id]).split('/')];
    command.isESM = false;
  }
  const manifest = {
    commands,
    version,
    dhvBuild,
    dhvCli: cli,
    dhvLean: Object.fromEntries(leanCommands(commands).map((id) => [id, leanModule(id)])),
  };
  const temp = `${MANIFEST}.${process.pid}.tmp`;
  await writeFile(temp, `${JSON.stringify(manifest, null, 2)}\n`);
  await rename(temp, MANIFEST);
  return manifest;
}

/**
 * Removes every bundle under dist/cli/ but those the manifest pointed at before and after
 * this build: a dhv started from the one before may still be loading its lazy chunks.
 */
async function removeOldBundles(...manifests) {
  const keep = new Set(manifests.map((manifest) => manifest?.dhvCli?.split('/').at(-1)));
  const dir = join(ROOT, ...BUNDLES);
  for (const name of await readdir(dir))
    if (!keep.has(name)) await rm(join(dir, name), { recursive: true, force: true });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const before = readManifest();
  const manifest = await buildCli();
  await removeOldBundles(before, manifest);
  process.stdout.write(
    `bundled dhv into ${manifest.dhvCli}, wrote ${MANIFEST} (${Object.keys(manifest.commands).length} commands)\n`,
  );
}
