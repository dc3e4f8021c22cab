import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BUNDLE_FILE, ROOT, buildCli, buildStamp, distEntry, moduleInBundle, readManifest } from './build-cli.js';
import { loadBundle } from './load-bundle.js';

/**
 * dhv runs from its bundle (dist/cli/<id>/, made by the build with the manifest that points
 * at it): oclif loads only the module of the command that runs, and the manifest carries
 * every command's help. Without a usable bundle it runs the compiled files as they are,
 * from the explicit list in package.json (dist/commands/index.js, which imports them all).
 */
export async function start() {
  const pjson = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  const cli = await currentBundle();
  if (cli === undefined) {
    const { execute } = await import('@oclif/core');
    return execute({ loadOptions: { root: ROOT, pjson } });
  }
  const { execute } = loadBundle(join(ROOT, cli, BUNDLE_FILE));
  const inBundle = (path) => `./${cli}/${moduleInBundle(distEntry(path))}`;
  const hooks = Object.fromEntries(
    Object.entries(pjson.oclif.hooks ?? {}).map(([event, paths]) => [event, [paths].flat().map(inBundle)]),
  );
  const oclif = { ...pjson.oclif, commands: { strategy: 'pattern', target: `./${cli}/commands` }, hooks };
  return execute({ loadOptions: { root: ROOT, pjson: { ...pjson, oclif } } });
}

/**
 * The bundle the manifest points at, when it is there and was made from the compiled
 * packages as they are now; else made again now (a `tsc -b` since the last build). An
 * installed package has no build info and trusts the bundle it was packed with.
 */
async function currentBundle() {
  const stamp = await buildStamp();
  const manifest = await readManifest();
  const made = manifest?.dhvCli && existsSync(join(ROOT, manifest.dhvCli, BUNDLE_FILE));
  if (made && (stamp === undefined || manifest.dhvBuild === stamp)) return manifest.dhvCli;
  if (stamp === undefined) return undefined;
  return buildCli().then(
    (made) => made.dhvCli,
    () => undefined,
  );
}
