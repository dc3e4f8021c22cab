import { basename, join, resolve } from 'node:path';
import { execa } from 'execa';
import fs from 'fs-extra';
import { AuthoringError } from './errors.js';
import { installedPackageDir, type DhvPackage } from './installed-package.js';

/** Where `dhv init` writes the packed copies of the SDK and harness it runs. */
export const VENDOR_DIR = 'vendor';

/**
 * Packs the installed packages with one `npm pack` into `destination`, so the generated
 * project installs the exact code that generated it, with no registry and no checkout.
 * Returns each package's tarball file name.
 */
export async function packInstalledPackages(
  packageNames: readonly DhvPackage[],
  destination: string,
): Promise<Map<DhvPackage, string>> {
  const from = packageNames.map((name) => installedPackageDir(name));
  // npm settings inherited from an `npm run -w ...` that started dhv would redirect the pack.
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !/^npm_config_(workspaces?|include_workspace_root)$/i.test(key)),
  );
  const packed = await execa(
    'npm',
    ['pack', ...from, '--pack-destination', destination, '--json', '--ignore-scripts', '--loglevel=error'],
    {
      cwd: destination,
      env,
      extendEnv: false,
      reject: false,
    },
  );
  const filenames = packed.exitCode === 0 ? parsePackOutput(packed.stdout, packageNames) : undefined;
  const missing = filenames
    ? await Promise.all(
        packageNames.map(async (name) => !(await fs.pathExists(join(destination, filenames.get(name)!)))),
      )
    : [];
  if (filenames === undefined || missing.includes(true)) {
    // What one package's pack wrote before another's failed: named as npm pack names it.
    await Promise.all(
      from.map(async (folder) => {
        const { name, version } = (await fs.readJson(join(folder, 'package.json')).catch(() => ({}))) as {
          name?: string;
          version?: string;
        };
        if (name && version)
          await fs.remove(join(destination, `${name.replace(/^@/, '').replace('/', '-')}-${version}.tgz`));
      }),
    );
    const why =
      packed.code === 'ENOENT'
        ? 'npm was not found on PATH'
        : (packed.stderr || packed.stdout || packed.message || `exit code ${packed.exitCode}`).trim();
    const what = packageNames.join(' and ');
    throw new AuthoringError(
      'PACK_FAILED',
      `could not pack ${what} from ${from.join(' and ')} into the new project: ${why}\n` +
        'dhv init packs the SDK and harness it runs with npm; install npm, or pass --from-registry (once @dhv/* are published) or --sdk-from/--harness-from',
      { packageName: what, from: from.join(' ') },
    );
  }
  return filenames;
}

/** npm pack --json's file name of each package, or undefined when one is not there. */
function parsePackOutput(stdout: string, packageNames: readonly DhvPackage[]): Map<DhvPackage, string> | undefined {
  try {
    const entries = JSON.parse(stdout) as Array<{ name?: unknown; filename?: unknown }>;
    const filenames = new Map<DhvPackage, string>();
    for (const name of packageNames) {
      const filename = entries.find((entry) => entry.name === name)?.filename;
      if (typeof filename !== 'string') return undefined;
      filenames.set(name, basename(filename));
    }
    return filenames;
  } catch {
    return undefined;
  }
}

/**
 * A dependency specifier given by the user: `file:` pointing at a local folder or
 * packed tarball (`npm pack`).
 */
export async function localPackageSource(packageName: DhvPackage, from: string): Promise<string> {
  const path = resolve(from);
  const info = await fs.stat(path).catch(() => undefined);
  if (!info) {
    throw new AuthoringError(
      'BAD_PACKAGE_SOURCE',
      `${path} does not exist; give a folder holding ${packageName} or a tarball made by npm pack`,
      {
        packageName,
        path,
      },
    );
  }
  if (info.isDirectory()) {
    const manifest = (await fs.readJson(join(path, 'package.json')).catch(() => undefined)) as
      { name?: unknown } | undefined;
    const name = manifest?.name;
    if (name !== packageName) {
      throw new AuthoringError(
        'BAD_PACKAGE_SOURCE',
        `${path} is not the ${packageName} package (its package.json ${name === undefined ? 'is missing' : `names ${JSON.stringify(name)}`}); give the package's folder or a tarball made by npm pack`,
        { packageName, path },
      );
    }
  } else if (!/\.(tgz|tar\.gz)$/.test(path)) {
    throw new AuthoringError('BAD_PACKAGE_SOURCE', `${path} is neither a folder nor a .tgz tarball made by npm pack`, {
      packageName,
      path,
    });
  }
  return `file:${path}`;
}
