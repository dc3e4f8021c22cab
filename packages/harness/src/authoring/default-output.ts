import { dirname, join, resolve } from 'node:path';
import fs from 'fs-extra';
import { UsageError } from '../errors/dhv-error.js';
import { AuthoringError } from './errors.js';
import { validatePluginId } from './plugin-id.js';

/**
 * Where `dhv build` writes when no `-o` is given: `dist/<plugin ID>` in the project that
 * holds the entry, the ID being the project's package name (the one `dhv init` gave it),
 * without an npm scope.
 */
export async function defaultOutfile(entry: string): Promise<string> {
  const project = await projectOf(resolve(entry));
  if (project === undefined) {
    throw new UsageError(
      `no package.json above ${resolve(entry)} names the plugin, so there is no default output; give it with -o dist/<plugin ID>`,
      'NO_OUTPUT',
      { entry },
    );
  }
  const name = project.name.replace(/^@[^/]+\//, '');
  try {
    validatePluginId(name);
  } catch (err) {
    if (!(err instanceof AuthoringError)) throw err;
    throw new UsageError(
      `${err.message} (it is the name in ${join(project.dir, 'package.json')}, which names the default output); give the output with -o dist/<plugin ID>`,
      'NO_OUTPUT',
      { entry, packageName: project.name },
    );
  }
  return join(project.dir, 'dist', name);
}

async function projectOf(file: string): Promise<{ dir: string; name: string } | undefined> {
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    const manifest = (await fs.readJson(join(dir, 'package.json')).catch(() => undefined)) as
      { name?: unknown } | undefined;
    if (typeof manifest?.name === 'string' && manifest.name !== '') return { dir, name: manifest.name };
    if (dirname(dir) === dir) return undefined;
  }
}
