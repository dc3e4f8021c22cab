import { access, constants, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { bundlePlugin } from '@dhv/sdk/build';
import fs from 'fs-extra';
import { PluginError, valueOf } from '@dhv/sdk/client';
import { CleanupJournal } from '@dhv/sdk/host';
import { processRunner } from '../runner/process-runner.js';
import { AuthoringError } from './errors.js';
import { makeSingleExecutable } from './single-executable.js';

const { remove } = fs;

export interface BuildOptions {
  /** The TypeScript or JavaScript file whose default export is `definePlugin({...})`. */
  entry: string;
  outfile: string;
  /** The node the plugin tries first (or copied into a single executable); defaults to the one running. */
  nodePath?: string;
  /** Name only `nodePath` in a `#!` line, instead of the launcher that searches the usual places. */
  fixedNode?: boolean;
  /** Build a Node single executable application instead of a script. */
  sea?: boolean;
  /** Keep a source map in the file, and readable names: stack traces point at the plugin's source. */
  sourcemap?: boolean;
}

export interface BuildResult {
  outfile: string;
  kind: 'script' | 'sea';
  bytes: number;
  /** The node tried first, the one the `#!` line names, or the one copied into the single executable. */
  node: string;
  /** For a script: every node it tries, in order (one with --fixed-node). */
  searchPath: string[];
  /** What the built file answered to `fingerprint` under the agent's environment; null when it could not be run here. */
  version: string | null;
  warnings: string[];
}

/** Time for the smoke test; the 1 s budget itself is `dhv check`'s business, not the build's. */
const SMOKE_TEST_TIMEOUT_MS = 10_000;

/**
 * Builds a plugin into one executable file with the SDK's bundler (the code path the
 * reference plugins build with), then runs its fingerprint exactly as an agent would,
 * so a build that cannot start under the agent's empty environment never ships.
 */
export async function buildPlugin(options: BuildOptions): Promise<BuildResult> {
  const entry = resolve(options.entry);
  const outfile = resolve(options.outfile);
  const node = options.nodePath ?? process.execPath;
  if (!isAbsolute(node)) {
    throw new AuthoringError(
      'BAD_INTERPRETER',
      `--node must be an absolute path (the agent runs plugins without PATH), got ${JSON.stringify(node)}`,
      {
        node,
      },
    );
  }
  const nodeHere = await access(node, constants.X_OK).then(
    () => true,
    () => false,
  );
  if (options.sea && !nodeHere) {
    throw new AuthoringError(
      'BAD_INTERPRETER',
      `${node} is not an executable file here; --sea copies the node binary into the plugin, so it must exist`,
      {
        node,
      },
    );
  }
  if (
    !(await stat(entry).then(
      (s) => s.isFile(),
      () => false,
    ))
  ) {
    throw new AuthoringError(
      'BUILD_FAILED',
      `the plugin entry ${entry} does not exist; give the file that exports default definePlugin({...})`,
      {
        entry,
      },
    );
  }

  const warnings: string[] = [];
  let searchPath: string[] = [];
  if (options.sea) {
    const journal = CleanupJournal.forThisProcess();
    const { path: work } = await journal.makeFolder(tmpdir(), 'dhv-build-');
    try {
      const script = join(work, 'plugin.cjs');
      await bundle(entry, script, node, true, false);
      await makeSingleExecutable({ script, outfile, nodePath: node });
    } finally {
      await journal.removeFolder(work);
    }
  } else {
    searchPath = await bundle(entry, outfile, node, options.fixedNode ?? false, options.sourcemap ?? false);
  }

  // The launcher falls back to another node, so only a fixed #! line to a missing node cannot be tried here.
  let version: string | null = null;
  if (nodeHere || (!options.sea && !options.fixedNode)) {
    if (!nodeHere)
      warnings.push(
        `${node} does not exist on this machine, so the smoke test ran with the first node the launcher found here`,
      );
    version = await smokeTest(outfile);
  } else {
    warnings.push(
      `${node} does not exist on this machine, so the built plugin was not run; run dhv check on a machine that has it`,
    );
  }
  const { size } = await stat(outfile);
  return { outfile, kind: options.sea ? 'sea' : 'script', bytes: size, node, searchPath, version, warnings };
}

async function bundle(
  entry: string,
  outfile: string,
  nodePath: string,
  fixedNode: boolean,
  sourcemap: boolean,
): Promise<string[]> {
  try {
    const { searchPath } = await bundlePlugin({
      entry,
      outfile,
      nodePath,
      launcher: fixedNode ? 'fixed' : 'search',
      ...(sourcemap ? { sourcemap: true, minify: false } : {}),
    });
    return searchPath;
  } catch (err) {
    await remove(outfile);
    const message = err instanceof Error ? err.message : String(err);
    throw new AuthoringError('BUILD_FAILED', `could not bundle ${entry}: ${message}`, { entry });
  }
}

/** Runs `fingerprint` with only what an agent passes; removes the file when it does not answer. */
async function smokeTest(outfile: string): Promise<string> {
  try {
    const { version } = valueOf(
      await processRunner.run('fingerprint', { plugin: outfile, request: {}, timeoutMs: SMOKE_TEST_TIMEOUT_MS }),
    );
    return version;
  } catch (err) {
    await remove(outfile);
    if (!(err instanceof PluginError)) throw err;
    throw new AuthoringError(
      'BUILD_DOES_NOT_RUN',
      `the built plugin does not answer fingerprint under the agent's environment, so it was removed: ${err.message}${err.stderr ? `\n${err.stderr.trim()}` : ''}`,
      { outfile, pluginError: err.code, stderr: err.stderr },
    );
  }
}
