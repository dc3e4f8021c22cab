import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { execa } from 'execa';
import fs from 'fs-extra';
import { CleanupJournal } from '@dhv/sdk/host';
import { AuthoringError } from './errors.js';

/** The marker Node's binary carries for an injected application (Node's SEA documentation). */
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';

export interface SingleExecutableOptions {
  /** The bundled CommonJS plugin, everything inside it (a SEA can require only Node's built-ins). */
  script: string;
  outfile: string;
  /** The node binary to copy; it also writes the blob, whose format is tied to its version. */
  nodePath: string;
}

/**
 * A Node single executable application: a copy of `node` with the plugin injected, so
 * a client without Node can run it. Node 20's `--experimental-sea-config` writes the
 * blob and postject puts it into the copy.
 */
export async function makeSingleExecutable({ script, outfile, nodePath }: SingleExecutableOptions): Promise<void> {
  // Made beside the output, so the finished copy is renamed into place; through the cleanup
  // journal, so a build killed half way leaves nothing the next dhv command does not remove.
  const journal = CleanupJournal.forThisProcess();
  await mkdir(dirname(outfile), { recursive: true });
  const { path: work } = await journal.makeFolder(dirname(outfile), '.dhv-build-');
  try {
    const blob = join(work, 'plugin.blob');
    const config = join(work, 'sea-config.json');
    const partial = join(work, 'plugin');
    await writeFile(config, JSON.stringify({ main: script, output: blob, disableExperimentalSEAWarning: true }));
    const blobRun = await execa(nodePath, ['--experimental-sea-config', config], { cwd: work, reject: false });
    if (blobRun.failed) {
      throw new AuthoringError(
        'SEA_FAILED',
        `${nodePath} could not write a single executable blob (it needs Node 20 or later): ${(blobRun.stderr || blobRun.message || `exit code ${blobRun.exitCode}`).trim()}`,
        { nodePath },
      );
    }
    await fs.copy(nodePath, partial);
    await chmod(partial, 0o755);
    await injectBlob(partial, await readFile(blob), nodePath);
    await rename(partial, outfile);
  } finally {
    await journal.removeFolder(work);
  }
}

/**
 * postject's ELF parser (LIEF, compiled to wasm) warns about harmless section names on
 * Node's own binary through console.warn; those lines are kept out of the output and
 * only reported when injecting fails.
 */
async function injectBlob(executable: string, blob: Buffer, nodePath: string): Promise<void> {
  const { inject } = await import('postject');
  const warnings: string[] = [];
  const warn = console.warn;
  console.warn = (...args: unknown[]) => void warnings.push(args.join(' '));
  try {
    await inject(executable, 'NODE_SEA_BLOB', blob, { sentinelFuse: SEA_FUSE });
  } catch (err) {
    throw new AuthoringError(
      'SEA_FAILED',
      `postject could not inject the plugin into a copy of ${nodePath}: ${err instanceof Error ? err.message : String(err)}`,
      { nodePath, warnings },
    );
  } finally {
    console.warn = warn;
  }
}
