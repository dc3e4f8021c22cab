import { chmod, mkdir, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';

/**
 * Bundles a plugin into one executable file: minified CommonJS with every dependency
 * inside, behind an interpreter line that works with no PATH. The entry's default
 * export is a plugin from definePlugin; the bundle runs its main().
 */
export interface BundleOptions {
  entry: string;
  outfile: string;
  /** The node the interpreter line names; defaults to the node running the build. */
  nodePath?: string;
  minify?: boolean;
}

export interface BundleResult {
  outfile: string;
  bytes: number;
  interpreter: string;
}

export async function bundlePlugin(options: BundleOptions): Promise<BundleResult> {
  const entry = resolve(options.entry);
  const outfile = resolve(options.outfile);
  const interpreter = options.nodePath ?? process.execPath;
  if (!interpreter.startsWith('/')) {
    throw new Error(`the interpreter must be an absolute path (the agent gives plugins no PATH), got ${JSON.stringify(interpreter)}`);
  }
  await stat(entry).catch(() => {
    throw new Error(`plugin entry ${entry} does not exist`);
  });
  const { build } = await import('esbuild');
  await mkdir(dirname(outfile), { recursive: true });
  await build({
    stdin: {
      contents: [
        `const entry = require(${JSON.stringify(entry)});`,
        `const plugin = entry && entry.default && typeof entry.default.main === 'function' ? entry.default : entry;`,
        `if (!plugin || typeof plugin.main !== 'function') { process.stderr.write('the plugin entry must export default definePlugin({...})\\n'); process.stdout.write('{"error":"plugin entry has no default export from definePlugin"}\\n'); process.exit(2); }`,
        `plugin.main();`,
      ].join('\n'),
      resolveDir: dirname(entry),
      sourcefile: 'dhv-plugin-main.js',
      loader: 'js',
    },
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    minify: options.minify ?? true,
    legalComments: 'none',
    banner: { js: `#!${interpreter}` },
    logLevel: 'silent',
  });
  await chmod(outfile, 0o755);
  const { size } = await stat(outfile);
  return { outfile, bytes: size, interpreter };
}
