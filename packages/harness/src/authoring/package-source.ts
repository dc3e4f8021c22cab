import { readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { AuthoringError } from './errors.js';

/**
 * The dependency specifier for one of this repo's packages in a generated project: the
 * published version range, or `file:` pointing at a local folder or packed tarball
 * (`npm pack`), so a project can be installed before the packages are published.
 */
export async function packageSource(packageName: string, version: string, from: string | undefined): Promise<string> {
  if (from === undefined) return `^${version}`;
  const path = resolve(from);
  const info = await stat(path).catch(() => undefined);
  if (!info) {
    throw new AuthoringError('BAD_PACKAGE_SOURCE', `${path} does not exist; give a folder holding ${packageName} or a tarball made by npm pack`, {
      packageName,
      path,
    });
  }
  if (info.isDirectory()) {
    const manifest = await readFile(join(path, 'package.json'), 'utf8').catch(() => undefined);
    const name = manifest === undefined ? undefined : (JSON.parse(manifest) as { name?: unknown }).name;
    if (name !== packageName) {
      throw new AuthoringError(
        'BAD_PACKAGE_SOURCE',
        `${path} is not the ${packageName} package (its package.json ${name === undefined ? 'is missing' : `names ${JSON.stringify(name)}`}); give the package's folder or a tarball made by npm pack`,
        { packageName, path },
      );
    }
  } else if (!/\.(tgz|tar\.gz)$/.test(path)) {
    throw new AuthoringError('BAD_PACKAGE_SOURCE', `${path} is neither a folder nor a .tgz tarball made by npm pack`, { packageName, path });
  }
  return `file:${path}`;
}
