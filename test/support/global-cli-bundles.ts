import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './checkout-paths.js';

const HARNESS = join(REPO_ROOT, 'packages/harness');
const BUNDLES = join(HARNESS, 'dist/cli');

/** The bundle folder (`dist/cli/<id>`) the manifest points at now, if it can be read. */
function currentBundle(): string | undefined {
  try {
    const { dhvCli } = JSON.parse(readFileSync(join(HARNESS, 'oclif.manifest.json'), 'utf8')) as { dhvCli?: string };
    return dhvCli?.split('/').at(-1);
  } catch {
    return undefined;
  }
}

/**
 * Vitest global setup: test/cli-loading.test.ts makes dhv bundle itself again in the
 * checkout, and dhv processes starting at that moment do it too; each keeps the bundles it
 * replaced, since a dhv started before may still load from them. Once every test has ended
 * nothing does: the teardown keeps the bundle the run started with and the one the manifest
 * names now (as `npm run build` keeps the one before it and its own), and removes the
 * others, 15 MB each, which would otherwise pile up in a checkout run after run.
 */
export function setup(): () => void {
  const atStart = currentBundle();
  return () => {
    const keep = new Set([atStart, currentBundle()]);
    if (keep.has(undefined)) return;
    try {
      for (const name of readdirSync(BUNDLES))
        if (!keep.has(name)) rmSync(join(BUNDLES, name), { recursive: true, force: true });
    } catch (err) {
      console.log(`test teardown: could not remove the bundles of ${BUNDLES} this run replaced: ${String(err)}`);
    }
  };
}
