// The oclif manifest of dhv's commands (oclif.manifest.json beside package.json): every
// command's flags, args and help, so `dhv <command>` imports only that command's module
// and `dhv help` imports none. Written by the build (`npm run build`, after tsc) from the
// one list of commands, dist/commands/index.js; bin/run.js writes it again when the
// compiled commands are newer than it (a `tsc -b` without the rest of the build), so it
// is never stale.
import { readFile, rename, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const MANIFEST = join(ROOT, 'oclif.manifest.json');
/** tsc -b rewrites it whenever it compiles this package: the manifest remembers which one it was made from. */
const BUILD_INFO = join(ROOT, 'tsconfig.tsbuildinfo');
const COMMANDS_DIR = ['dist', 'commands'];

/** What identifies one compile of the package, or undefined outside a source tree (an installed package). */
export async function buildStamp() {
  const info = await stat(BUILD_INFO).catch(() => undefined);
  return info && `${info.mtimeMs}:${info.size}`;
}

/**
 * The manifest oclif makes in memory from the explicit list (dist/commands/index.js), each
 * command then pointed at its own module, `dist/commands/<topic>/<name>.js`: that module's
 * default export must be the very class the list holds, or the build fails.
 */
export async function makeManifest() {
  const { Plugin } = await import('@oclif/core');
  const pjson = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8'));
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
    commands[id] = { ...cached, isESM: true, relativePath };
  }
  return { commands, version: plugin.version, dhvBuild: await buildStamp() };
}

/** Writes the manifest by rename, so a dhv starting meanwhile reads the old one or the new one whole. */
export async function writeManifest() {
  const manifest = await makeManifest();
  const temp = `${MANIFEST}.${process.pid}.tmp`;
  await writeFile(temp, `${JSON.stringify(manifest, null, 2)}\n`);
  await rename(temp, MANIFEST);
  return manifest;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const manifest = await writeManifest();
  process.stdout.write(`wrote ${MANIFEST} (${Object.keys(manifest.commands).length} commands)\n`);
}
