import { spawnSync } from 'node:child_process';
import { chmod, mkdir, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, resolve, sep } from 'node:path';
import type { Plugin as EsbuildPlugin } from 'esbuild';
import { launcherHeader, NODE_SEARCH_PATHS } from './build-launcher.js';
import { buildEnvironment } from './client/environment.js';
import { fingerprintRequest } from './client/agent-requests.js';
import { keepCommonJsScope } from './build-module-scope.js';

/**
 * Bundles a plugin into one executable file: minified CommonJS with every dependency
 * inside, behind a start-up line that works with no PATH. The entry's default
 * export is a plugin from definePlugin; the bundle runs its main().
 */
export interface BundleOptions {
  entry: string;
  outfile: string;
  /** The node tried first (or, with `launcher: 'fixed'`, the only one); defaults to the node running the build. */
  nodePath?: string;
  /**
   * `search` (the default): a `#!/bin/sh` line that runs the first node found at
   * `nodePath` or one of NODE_SEARCH_PATHS. `fixed`: `#!<nodePath>`, which starts a
   * little faster but only on hosts that have node at exactly that path.
   */
  launcher?: 'search' | 'fixed';
  minify?: boolean;
  /**
   * Keep a source map inside the file and start node with --enable-source-maps, so a
   * plugin's stack traces name its own source files and lines (a larger file).
   */
  sourcemap?: boolean;
}

export interface BundleResult {
  outfile: string;
  bytes: number;
  /** The node tried first, or the one the `#!` line names. */
  interpreter: string;
  launcher: 'search' | 'fixed';
  /** Every node the file tries, in order. */
  searchPath: string[];
  /** Who answers the agent's fingerprint: the launcher, before node starts (the plugin's answer is fixed by its `version`), or node. */
  fingerprintBy: 'launcher' | 'node';
  /** The `{"type":"commonjs"}` package.json written beside the bundle, when a module-type package would otherwise claim it. */
  commonJsMarker?: string;
}

export { NODE_SEARCH_PATHS } from './build-launcher.js';

export async function bundlePlugin(options: BundleOptions): Promise<BundleResult> {
  const entry = resolve(options.entry);
  const outfile = resolve(options.outfile);
  const interpreter = options.nodePath ?? process.execPath;
  if (!interpreter.startsWith('/')) {
    throw new Error(
      `the interpreter must be an absolute path (the agent gives plugins no PATH), got ${JSON.stringify(interpreter)}`,
    );
  }
  await stat(entry).catch(() => {
    throw new Error(`plugin entry ${entry} does not exist`);
  });
  const launcher = options.launcher ?? 'search';
  const esbuild = await loadEsbuild();
  const fixedFingerprint = launcher === 'search' ? await readFixedFingerprint(esbuild, entry) : undefined;
  const nodeFlags = options.sourcemap ? ['--enable-source-maps'] : [];
  const banner =
    launcher === 'search'
      ? launcherHeader(interpreter, fixedFingerprint, nodeFlags)
      : `#!${[interpreter, ...nodeFlags].join(' ')}`;
  await mkdir(dirname(outfile), { recursive: true });
  await esbuild.build({
    ...bundleOptions(esbuild, entry, bundleMain(entry)),
    outfile,
    minify: options.minify ?? true,
    ...(options.sourcemap ? { sourcemap: 'inline' as const } : {}),
    banner: { js: banner },
  });
  await chmod(outfile, 0o755);
  const commonJsMarker = await keepCommonJsScope(outfile);
  const { size } = await stat(outfile);
  const searchPath =
    launcher === 'search' ? [interpreter, ...NODE_SEARCH_PATHS.filter((p) => p !== interpreter)] : [interpreter];
  return {
    outfile,
    bytes: size,
    interpreter,
    launcher,
    searchPath,
    fingerprintBy: fixedFingerprint === undefined ? 'node' : 'launcher',
    ...(commonJsMarker ? { commonJsMarker } : {}),
  };
}

type Esbuild = typeof import('esbuild');

function bundleOptions(esbuild: Esbuild, entry: string, contents: string) {
  return {
    stdin: { contents, resolveDir: dirname(entry), sourcefile: 'dhv-plugin-main.js', loader: 'js' as const },
    bundle: true,
    platform: 'node' as const,
    target: 'node20',
    format: 'cjs' as const,
    legalComments: 'none' as const,
    logLevel: 'silent' as const,
    plugins: [deferSdkDynamicImports(esbuild.build)],
  };
}

/**
 * The plugin's fixed fingerprint answer (Plugin.fixedFingerprint), read by loading its
 * module once in a node of its own with exactly the environment the agent gives a
 * fingerprint, as node would load it for the agent. Undefined when the plugin has its own
 * fingerprint handler or its module does not load so: its launcher then leaves
 * fingerprint to node, and the smoke test of `dhv build` reports what is wrong.
 */
async function readFixedFingerprint(esbuild: Esbuild, entry: string): Promise<string | undefined> {
  const probe = await esbuild.build({
    ...bundleOptions(esbuild, entry, probeMain(entry)),
    write: false,
    minify: true,
  });
  const run = spawnSync(process.execPath, ['-'], {
    input: probe.outputFiles[0]!.text,
    env: buildEnvironment('fingerprint', fingerprintRequest(), entry),
    encoding: 'utf8',
    timeout: PROBE_TIMEOUT_MS,
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  if (run.status !== 0) return undefined;
  try {
    const answer: unknown = JSON.parse(run.stdout.split('\n').at(-1) ?? '');
    return typeof answer === 'string' ? answer : undefined;
  } catch {
    return undefined;
  }
}

const PROBE_TIMEOUT_MS = 30_000;

/** Prints the entry's fixed fingerprint answer as the last line of stdout, whatever its module printed first. */
function probeMain(entry: string): string {
  return `
const entry = require(${JSON.stringify(entry)});
const plugin = entry && entry.default && typeof entry.default.main === 'function' ? entry.default : entry;
process.stdout.write('\\n' + JSON.stringify(plugin && typeof plugin.fixedFingerprint === 'string' ? plugin.fixedFingerprint : null));
`;
}

/**
 * esbuild is an optional peer dependency: only building needs it, so plugin projects
 * that install prebuilt plugins, or only use the runtime, do not download it.
 */
async function loadEsbuild(): Promise<typeof import('esbuild')> {
  try {
    return await import('esbuild');
  } catch (err) {
    if ((err as { code?: unknown }).code !== 'ERR_MODULE_NOT_FOUND') throw err;
    throw Object.assign(
      new Error(
        "Cannot find package 'esbuild'\nbundling a plugin needs esbuild, an optional peer dependency of @dhv/sdk: npm install --save-dev esbuild",
      ),
      { code: 'ESBUILD_MISSING' },
    );
  }
}

/**
 * The bundle's own entry: load the plugin's module, then run its main(). Written as
 * plain CommonJS so it costs nothing at start-up. While the plugin's modules load,
 * before the runtime takes over, whatever they print goes to stderr, and a module that
 * throws still ends as the protocol's `{"error"}` rather than a bare stack trace.
 */
function bundleMain(entry: string): string {
  return `
const { writeSync } = require('node:fs');
const fail = (message, detail, exitCode) => {
  try { writeSync(2, message + '\\n' + (detail ? detail + '\\n' : '')); } catch {}
  try { writeSync(1, JSON.stringify({ error: message }) + '\\n'); } catch {}
  process.exit(exitCode);
};
for (const method of ['log', 'info', 'debug', 'dirxml']) console[method] = console.error;
console.dir = (value, options) => console.error(require('node:util').inspect(value, options));
let entry;
try {
  entry = require(${JSON.stringify(entry)});
} catch (err) {
  fail('the plugin failed to load: ' + (err instanceof Error ? err.message : String(err)), err instanceof Error ? err.stack : '', 1);
}
const plugin = entry && entry.default && typeof entry.default.main === 'function' ? entry.default : entry;
if (!plugin || typeof plugin.main !== 'function') {
  fail('the plugin entry has no default export from definePlugin', 'the entry must end with: export default definePlugin({ ... })', 2);
}
plugin.main();
`;
}

/**
 * The SDK's own compiled files; dynamic imports from these are deferred. Found through
 * the package's name, not this file's place, which moves when dhv's CLI bundles it.
 */
const SDK_DIST = join(dirname(createRequire(import.meta.url).resolve('@dhv/sdk/package.json')), 'dist') + sep;

const DEFERRED = 'dhv-deferred';

/**
 * Keeps what the SDK loads lazily (behind the runtime's `await import()`) out of the
 * code node parses at start-up. esbuild turns a dynamic import into a lazily *evaluated*
 * wrapper, but node still has to parse the whole file before running a line of it, and
 * for a large module (a schema library, once) that parse alone costs more than the rest
 * of a fingerprint. So each such module is bundled on its own and embedded as a string
 * (which node only scans), compiled the first time create or delete imports it. The
 * result is still one self-contained file.
 */
function deferSdkDynamicImports(build: typeof import('esbuild').build): EsbuildPlugin {
  return {
    name: 'dhv-defer-sdk-dynamic-imports',
    setup(b) {
      b.onResolve({ filter: /.*/ }, async (args) => {
        if (args.kind !== 'dynamic-import' || !args.importer.startsWith(SDK_DIST)) return undefined;
        const resolved = await b.resolve(args.path, {
          kind: 'require-call',
          resolveDir: args.resolveDir,
          importer: args.importer,
        });
        if (resolved.errors.length > 0 || resolved.external) return undefined;
        return { path: resolved.path, namespace: DEFERRED };
      });
      b.onLoad({ filter: /.*/, namespace: DEFERRED }, async (args) => {
        const chunk = await build({
          entryPoints: [args.path],
          bundle: true,
          write: false,
          platform: 'node',
          target: 'node20',
          format: 'cjs',
          minify: true,
          legalComments: 'none',
          logLevel: 'silent',
        });
        const code = chunk.outputFiles[0]!.text;
        return {
          contents: [
            `const deferred = { exports: {} };`,
            `new Function('module', 'exports', 'require', ${JSON.stringify(code)})(deferred, deferred.exports, require);`,
            `module.exports = deferred.exports;`,
          ].join('\n'),
          loader: 'js',
          resolveDir: dirname(args.path),
        };
      });
    },
  };
}
